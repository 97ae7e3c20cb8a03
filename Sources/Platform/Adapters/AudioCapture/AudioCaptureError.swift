/// Why audio capture could not start or stopped, with a message that says what to do.
public struct AudioCaptureError: Error, Sendable, Hashable, CustomStringConvertible {
    /// An extensible error code.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Backing: String, Sendable, Hashable {
            case invalidSource, unsupportedSource, gstreamerUnavailable, missingPlugin, noInputDevice,
                deviceUnavailable, fileUnreadable, unsupportedFormat, inputEnded, alreadyStarted, pipelineFailed
        }

        private let backing: Backing

        private init(_ backing: Backing) { self.backing = backing }

        /// The `--audio-source` value is not one of the accepted forms.
        public static let invalidSource = Code(.invalidSource)
        /// The source is valid but not captured through GStreamer (the `test:` sources are generated in-process).
        public static let unsupportedSource = Code(.unsupportedSource)
        /// GStreamer itself could not be initialised.
        public static let gstreamerUnavailable = Code(.gstreamerUnavailable)
        /// A GStreamer element or decoder the source needs is not installed.
        public static let missingPlugin = Code(.missingPlugin)
        /// `auto` found no working input (no sound server, no capture device).
        public static let noInputDevice = Code(.noInputDevice)
        /// The PulseAudio server or the ALSA device could not be opened.
        public static let deviceUnavailable = Code(.deviceUnavailable)
        /// The audio file does not exist or cannot be read.
        public static let fileUnreadable = Code(.fileUnreadable)
        /// The file is not audio GStreamer can decode, or holds no audio stream.
        public static let unsupportedFormat = Code(.unsupportedFormat)
        /// A live input stopped delivering audio (e.g. the device was unplugged).
        public static let inputEnded = Code(.inputEnded)
        /// The capture's sample stream was requested twice, or after it was stopped.
        public static let alreadyStarted = Code(.alreadyStarted)
        /// Any other GStreamer failure.
        public static let pipelineFailed = Code(.pipelineFailed)

        public var description: String { backing.rawValue }
    }

    /// What went wrong.
    public var code: Code
    /// What happened and what to do about it.
    public var message: String

    /// Creates an error.
    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}

extension AudioCaptureError {
    /// The accepted `--audio-source` forms, as a sentence.
    static let acceptedSources = "auto, pulse[:DEVICE], alsa[:DEVICE], file:PATH, test:cry or test:silence"

    /// A `--audio-source` value that does not parse; `detail` says what is wrong with a known form.
    static func invalidSource(_ text: String, _ detail: String?) -> AudioCaptureError {
        guard let detail else {
            return AudioCaptureError(
                code: .invalidSource,
                message: "unknown audio source '\(text)': use \(acceptedSources)"
            )
        }
        return AudioCaptureError(
            code: .invalidSource,
            message: "invalid audio source '\(text)': \(detail); accepted: \(acceptedSources)"
        )
    }
}
