public import Foundation

/// One uploaded recording on the server: what the seed calls a memory, with what processing found.
public struct Memory: Sendable, Hashable {
    /// Where processing stands.
    public enum Status: String, Sendable, Hashable, CaseIterable {
        case processing
        case ready
        case failed
    }

    /// Lowercase UUID, as the 201 body carries it.
    public var id: String
    /// The name the client gave the file (multipart filename or tus `filename` metadata), for people only.
    public var fileName: String
    /// The audio file, relative to the data directory (`audio/<id>.m4a`).
    public var path: String
    public var size: Int64
    public var status: Status
    /// Seconds of decoded audio.
    public var duration: Double?
    /// Integrated loudness in LUFS (nil for silence, where it is −∞).
    public var loudness: Double?
    public var transcript: String?
    /// Why processing failed.
    public var error: String?
    public var idempotencyKey: String?
    /// SHA-256 of the file.
    public var digest: [UInt8]?
    public var createdAt: Date
    public var processedAt: Date?
    /// How many times a worker finished processing it (1 once done: the exactly-once check of the tests).
    public var processingRuns: Int

    public init(
        id: String, fileName: String, path: String, size: Int64, status: Status = .processing,
        duration: Double? = nil, loudness: Double? = nil, transcript: String? = nil, error: String? = nil,
        idempotencyKey: String? = nil, digest: [UInt8]? = nil, createdAt: Date, processedAt: Date? = nil,
        processingRuns: Int = 0
    ) {
        self.id = id
        self.fileName = fileName
        self.path = path
        self.size = size
        self.status = status
        self.duration = duration
        self.loudness = loudness
        self.transcript = transcript
        self.error = error
        self.idempotencyKey = idempotencyKey
        self.digest = digest
        self.createdAt = createdAt
        self.processedAt = processedAt
        self.processingRuns = processingRuns
    }
}

/// A tus upload in progress (or complete): its length, how much arrived, and the memory it became.
public struct TusUpload: Sendable, Hashable {
    /// Lowercase hex, the last segment of its Location.
    public var id: String
    public var length: Int64
    public var offset: Int64
    /// The Upload-Metadata header as received (bounded by ToukanCore's TusMetadata).
    public var metadata: String
    public var fileName: String
    public var idempotencyKey: String?
    public var memoryId: String?
    public var createdAt: Date

    public init(
        id: String, length: Int64, offset: Int64 = 0, metadata: String, fileName: String, idempotencyKey: String?,
        memoryId: String? = nil, createdAt: Date
    ) {
        self.id = id
        self.length = length
        self.offset = offset
        self.metadata = metadata
        self.fileName = fileName
        self.idempotencyKey = idempotencyKey
        self.memoryId = memoryId
        self.createdAt = createdAt
    }
}

/// The store refused or failed a request.
public struct MemoryStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
