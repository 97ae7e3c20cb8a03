public import AudioCapture

/// What a recording listens to: the value of `--audio-source`.
///
/// Every ``AudioCapture/AudioSourceSpec`` form (`auto`, `pulse[:DEVICE]`, `alsa[:DEVICE]`, `file:PATH`,
/// `test:cry`, `test:silence`) plus two signals made for recordings:
/// - `test:tone`: a steady ``toneFrequency`` Hz sine at −12 dBFS, so a recording can be checked by its frequency.
/// - `test:speech`: an English sentence spoken by espeak-ng, looped (for transcription demos).
///
/// Both are rendered once into a WAV file (``SignalFiles``) and captured like `file:PATH`, in real time.
public enum RecordingSource: Hashable, Sendable {
    /// An input of the shared audio capture.
    case input(AudioSourceSpec)
    /// A steady sine tone.
    case tone
    /// Synthetic speech.
    case speech

    /// The frequency of `test:tone`, in hertz.
    public static let toneFrequency = 440

    /// The accepted forms, for help texts.
    public static let syntax = "auto|pulse[:DEVICE]|alsa[:DEVICE]|file:PATH|test:speech|test:tone"

    /// Parses the value of `--audio-source`.
    ///
    /// - Throws: ``RecorderError/Code/invalidSource`` with a message listing the accepted forms.
    public init(parsing text: String) throws(RecorderError) {
        switch text {
        case "test:tone": self = .tone
        case "test:speech": self = .speech
        default:
            do {
                self = .input(try AudioSourceSpec(parsing: text))
            } catch {
                throw RecorderError(
                    code: .invalidSource,
                    message:
                        "invalid audio source '\(text)': use \(Self.syntax.split(separator: "|").joined(separator: ", "))"
                )
            }
        }
    }
}

extension RecordingSource: CustomStringConvertible {
    /// The accepted form of this source; `RecordingSource(parsing: source.description) == source`.
    public var description: String {
        switch self {
        case .input(let spec): spec.description
        case .tone: "test:tone"
        case .speech: "test:speech"
        }
    }
}
