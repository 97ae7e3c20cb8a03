/// The server's rule for a key it has seen: the same key with the same content is the same upload (answer with the
/// first memory, create nothing); the same key with other content is a client bug (422), never a second memory.
public enum IdempotencyRule {
    /// What the server remembers of an upload that carried a key.
    public struct Record: Sendable, Hashable {
        public var key: IdempotencyKey
        /// The file's length in bytes.
        public var length: Int64
        /// The file's SHA-256, once it was received whole (tus creation knows only the length).
        public var digest: [UInt8]?
        /// The memory it made; nil while the upload is incomplete.
        public var memoryId: String?

        public init(key: IdempotencyKey, length: Int64, digest: [UInt8]?, memoryId: String?) {
            self.key = key
            self.length = length
            self.digest = digest
            self.memoryId = memoryId
        }
    }

    public enum Decision: Sendable, Hashable {
        /// First time this key is seen: proceed.
        case new
        /// The same upload again: answer as the first time (its memory, if it has one; else continue it).
        case repeatOf(Record)
        /// The key was used for other content: 422 with this message.
        case conflict(String)
    }

    /// - Parameters:
    ///   - existing: What the server holds for the request's key, if anything.
    ///   - length: The incoming file's length.
    ///   - digest: The incoming file's SHA-256, when known (after receiving it whole).
    public static func decide(existing: Record?, length: Int64, digest: [UInt8]?) -> Decision {
        guard let existing else { return .new }
        guard existing.length == length else {
            return .conflict(
                "Idempotency-Key \(existing.key) was used for a \(existing.length)-byte upload; this one has "
                    + "\(length) bytes. Use a new key for a different file.")
        }
        if let known = existing.digest, let digest, known != digest {
            return .conflict(
                "Idempotency-Key \(existing.key) was used for a different file of the same length. Use a new key "
                    + "for a different file.")
        }
        return .repeatOf(existing)
    }
}
