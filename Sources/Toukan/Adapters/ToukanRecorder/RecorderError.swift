/// Why a recording could not start, stopped early, or could not be recovered, with a message that says what to do.
public struct RecorderError: Error, Sendable, Hashable, CustomStringConvertible {
    /// An extensible error code.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Backing: String, Sendable, Hashable {
            case invalidSource, missingDependency, inputUnavailable, noAudio, outputExists, outputUnwritable,
                diskFull, encodingFailed, alreadyStarted, notRecording, unrecoverable
        }

        private let backing: Backing

        private init(_ backing: Backing) { self.backing = backing }

        /// The `--audio-source` value is not one of the accepted forms.
        public static let invalidSource = Code(.invalidSource)
        /// A GStreamer element or a program (espeak-ng) is not installed; the message names the Debian package.
        public static let missingDependency = Code(.missingDependency)
        /// The input could not be opened when the recording started (no device, no sound server, no file).
        public static let inputUnavailable = Code(.inputUnavailable)
        /// The input opened but delivered no audio in time, or a file holds no audio.
        public static let noAudio = Code(.noAudio)
        /// The output file exists already: a recording is never overwritten.
        public static let outputExists = Code(.outputExists)
        /// The output file cannot be created or written.
        public static let outputUnwritable = Code(.outputUnwritable)
        /// The disk is full: the recording stopped, what was written is kept (recover it).
        public static let diskFull = Code(.diskFull)
        /// Any other GStreamer failure of the encoder.
        public static let encodingFailed = Code(.encodingFailed)
        /// ``ToukanRecorder/start()`` was called twice.
        public static let alreadyStarted = Code(.alreadyStarted)
        /// ``ToukanRecorder/stop()`` was called on a recorder that is not recording.
        public static let notRecording = Code(.notRecording)
        /// A partial recording holds nothing that can be read back.
        public static let unrecoverable = Code(.unrecoverable)

        public var description: String { backing.rawValue }
    }

    /// What went wrong.
    public var code: Code
    /// What happened and what to do about it.
    public var message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
