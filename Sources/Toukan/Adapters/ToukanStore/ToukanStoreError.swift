/// Why a ``ToukanDatabase`` operation was refused (a refused status move is a `RecordingTransitionError` instead).
public struct ToukanStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The database file cannot be created or opened.
        public static let cannotOpen = Code("cannotOpen")
        /// No recording has this id.
        public static let unknownRecording = Code("unknownRecording")
        /// A recording with this id, file or idempotency key is already in the ledger.
        public static let duplicateRecording = Code("duplicateRecording")
        /// A stored row cannot be read back (another program wrote something invalid).
        public static let corruptRow = Code("corruptRow")
    }

    public var code: Code
    /// What went wrong and, where it helps, what to do.
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
