/// Why video cannot be captured, in words that say what to do.
public struct VideoCaptureError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Code: Sendable, Hashable, RawRepresentable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// `--video-source` was not understood.
        public static let invalidSource = Code(rawValue: "invalidSource")
        /// GStreamer or an element is missing (the message names the Debian package).
        public static let missingPlugin = Code(rawValue: "missingPlugin")
        /// The camera is not there, busy, or stopped delivering.
        public static let cameraUnavailable = Code(rawValue: "cameraUnavailable")
        /// The pipeline failed otherwise.
        public static let pipelineFailed = Code(rawValue: "pipelineFailed")

        public var description: String { rawValue }
    }

    public var code: Code
    public var message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
