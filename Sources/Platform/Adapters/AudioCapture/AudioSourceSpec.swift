public import SoundDetection

/// Where the monitor's audio comes from: the value of `--audio-source`.
///
/// Accepted forms (``syntax``):
/// - `auto`: the system's default input (PulseAudio/PipeWire if it runs, else ALSA's default device).
/// - `pulse`, `pulse:DEVICE`: a PulseAudio (or PipeWire-pulse) source, by default the default source.
/// - `alsa`, `alsa:DEVICE`: an ALSA capture device such as `hw:0` or `plughw:1,0`, by default `default`.
/// - `file:PATH`: an audio file in any format GStreamer decodes (WAV, FLAC, Ogg, …), looped forever in real time.
/// - `test:silence`, `test:cry`: the in-process ``TestAudioSource`` signals (not captured through GStreamer).
///
/// Everything after the first colon belongs to the argument, so `alsa:hw:1,0` names device `hw:1,0` and
/// `file:/a:b.wav` names the path `/a:b.wav`. ``description`` gives back the accepted form.
public enum AudioSourceSpec: Hashable, Sendable {
    /// The system's default input.
    case auto
    /// A PulseAudio source; `nil` for the server's default source.
    case pulse(device: String?)
    /// An ALSA capture device; `nil` for ALSA's `default` device.
    case alsa(device: String?)
    /// An audio file, looped forever and paced in real time.
    case file(path: String)
    /// A built-in test signal, generated in-process by ``TestAudioSource``.
    case test(TestAudioSource.Kind)

    /// The accepted forms, for help texts: `auto|pulse[:DEVICE]|alsa[:DEVICE]|file:PATH|test:silence|test:cry`.
    public static let syntax =
        "auto|pulse[:DEVICE]|alsa[:DEVICE]|file:PATH|"
        + TestAudioSource.Kind.allCases.map { "test:\($0.rawValue)" }.joined(separator: "|")

    /// Parses the value of `--audio-source`.
    ///
    /// - Parameter text: One of the forms listed in ``syntax``, e.g. `alsa:hw:0` or `file:/tmp/cry.wav`.
    /// - Throws: ``AudioCaptureError`` with code ``AudioCaptureError/Code/invalidSource`` and a message naming the
    ///   accepted forms.
    public init(parsing text: String) throws(AudioCaptureError) {
        let scheme: Substring
        let argument: Substring?
        if let colon = text.firstIndex(of: ":") {
            scheme = text[..<colon]
            argument = text[text.index(after: colon)...]
        } else {
            scheme = text[...]
            argument = nil
        }
        switch scheme {
        case "auto":
            guard argument == nil else {
                throw .invalidSource(text, "auto takes no argument")
            }
            self = .auto
        case "pulse":
            self = .pulse(device: try Self.device(argument, in: text, example: "pulse:alsa_input.usb-mic"))
        case "alsa":
            self = .alsa(device: try Self.device(argument, in: text, example: "alsa:hw:0"))
        case "file":
            guard let path = argument, !path.isEmpty else {
                throw .invalidSource(text, "file: needs a path, e.g. file:/home/me/cry.wav")
            }
            self = .file(path: String(path))
        case "test":
            let names = TestAudioSource.Kind.allCases.map { "test:\($0.rawValue)" }.joined(separator: " or ")
            guard let argument, let kind = TestAudioSource.Kind(rawValue: String(argument)) else {
                throw .invalidSource(text, "there is no test source '\(argument ?? "")' (use \(names))")
            }
            self = .test(kind)
        default:
            throw .invalidSource(text, nil)
        }
    }

    /// The device after `pulse:`/`alsa:`; nil without a colon; an error for an empty one.
    private static func device(
        _ argument: Substring?,
        in text: String,
        example: String
    ) throws(AudioCaptureError) -> String? {
        guard let argument else { return nil }
        guard !argument.isEmpty else {
            let scheme = text.dropLast()
            throw .invalidSource(
                text,
                "\(text) needs a device after the colon (e.g. \(example)), "
                    + "or use plain \(scheme) for the default device"
            )
        }
        return String(argument)
    }
}

extension AudioSourceSpec: CustomStringConvertible {
    /// The accepted form of this source; `AudioSourceSpec(parsing: spec.description) == spec`.
    public var description: String {
        switch self {
        case .auto: "auto"
        case .pulse(let device): device.map { "pulse:\($0)" } ?? "pulse"
        case .alsa(let device): device.map { "alsa:\($0)" } ?? "alsa"
        case .file(let path): "file:\(path)"
        case .test(let kind): "test:\(kind.rawValue)"
        }
    }
}
