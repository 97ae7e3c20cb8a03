/// Why the media adapter could not create or drive a WebRTC peer. The message says what to do.
public struct MediaError: Error, Sendable, Hashable {
    /// What went wrong, for code that reacts to it (e.g. maps it to a START_STREAM_RESPONSE reason).
    public struct Code: Sendable, Hashable, RawRepresentable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// GStreamer itself does not initialise.
        public static let gstreamerUnavailable = Code(rawValue: "gstreamerUnavailable")
        /// An element (webrtcbin, nicesrc, opusenc, ...) is not installed; the message names the Debian package.
        public static let missingPlugin = Code(rawValue: "missingPlugin")
        /// The pipeline could not be built or started (e.g. the audio input cannot be opened).
        public static let pipelineFailed = Code(rawValue: "pipelineFailed")
        /// A session description that does not parse or that webrtcbin refused.
        public static let invalidDescription = Code(rawValue: "invalidDescription")
        /// A call that does not fit the peer (an answer to a receiver, an offer to a sender, a second remote
        /// description, a candidate for a media line that does not exist).
        public static let invalidState = Code(rawValue: "invalidState")
        /// An option that does not parse (e.g. `--video-source`); the message lists what is accepted.
        public static let invalidConfiguration = Code(rawValue: "invalidConfiguration")
        /// The peer has ended; nothing more can be done with it.
        public static let ended = Code(rawValue: "ended")
    }

    /// What went wrong.
    public var code: Code
    /// What happened and what to do about it, for people.
    public var message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }
}

extension MediaError: CustomStringConvertible {
    public var description: String { "\(message) [\(code)]" }
}
