/// An error of the PostgreSQL adapter that a person has to act on (a bad URL, a schema newer than this program).
///
/// Failures of the database itself (connection refused, a query that failed) are thrown as postgres-nio's own
/// errors; the hub answers them with INTERNAL_ERROR.
public struct PostgresStoreError: Error, Hashable, CustomStringConvertible {
    /// What went wrong, in a form code can switch on. Extensible: new codes may be added.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: Hashable, Sendable {
            case invalidURL
            case invalidNodeID
            case schemaTooNew
            case notListening
            case timedOut
        }

        private let value: Value

        /// The database URL cannot be used.
        public static let invalidURL = Code(value: .invalidURL)
        /// The node identifier is empty or too long.
        public static let invalidNodeID = Code(value: .invalidNodeID)
        /// The database holds a schema version this program does not know (a newer release migrated it).
        public static let schemaTooNew = Code(value: .schemaTooNew)
        /// The cluster bus stopped before it was listening.
        public static let notListening = Code(value: .notListening)
        /// The database did not answer in time (unreachable, or overloaded).
        public static let timedOut = Code(value: .timedOut)

        public var description: String { "\(value)" }
    }

    public var code: Code
    /// What happened and what to do about it.
    public var message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
