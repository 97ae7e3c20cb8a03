/// A ledger move that is not allowed, with the reason in words.
public struct RecordingTransitionError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The recording is uploaded: it is never uploaded again.
        public static let alreadyUploaded = Code("alreadyUploaded")
        /// An upload of it is in progress.
        public static let uploadInProgress = Code("uploadInProgress")
        /// The move needs an upload in progress and there is none.
        public static let notUploading = Code("notUploading")
        /// The recording failed: only a manual retry moves it.
        public static let failed = Code("failed")
        /// The local file may not be deleted (yet).
        public static let notPurgeable = Code("notPurgeable")
        /// A value the move was given is wrong (a negative offset, an empty memory id).
        public static let invalidArgument = Code("invalidArgument")
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
