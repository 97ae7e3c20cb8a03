public import Foundation

/// Where the server keeps its memories and tus uploads: ``SQLiteMemoryStore`` (one file in the data directory, for
/// the processes of one machine) or ``PostgresMemoryStore`` (for server processes on several machines). Both pass
/// the same contract tests; every method is one atomic step, so concurrent requests — in one process or several —
/// never make two memories of one idempotency key, nor move a tus offset twice.
public protocol MemoryStore: Sendable {
    /// Adds a memory, unless its idempotency key is taken: then the memory holding the key is returned and
    /// nothing is added (the caller applies ToukanCore's IdempotencyRule to it).
    /// - Returns: The memory now holding the key (`memory` itself when it was added) and whether it was added.
    func insert(_ memory: Memory) async throws -> (memory: Memory, inserted: Bool)

    /// The memory holding an idempotency key.
    func memory(idempotencyKey key: String) async throws -> Memory?

    func memory(id: String) async throws -> Memory?

    /// The newest memories first (then by id), `limit` of them, starting after the memory `after` (a page's last,
    /// as the cursor of the next page; nil: from the newest). An `after` that names no memory gives none.
    func memories(limit: Int, after: String?) async throws -> [Memory]

    /// Records what processing found: ready with its measures, or failed with the reason; counts the run.
    /// - Throws: ``MemoryStoreError`` when no memory has the id.
    func finishProcessing(
        id: String, status: Memory.Status, duration: Double?, loudness: Double?, transcript: String?,
        error: String?, now: Date
    ) async throws

    /// Adds a tus upload unless its idempotency key is taken: then the upload holding the key is returned.
    func insert(_ upload: TusUpload) async throws -> (upload: TusUpload, inserted: Bool)

    func upload(id: String) async throws -> TusUpload?

    /// Moves an upload's offset from `from` to `to` (after the bytes are on disk); false when another request
    /// moved it first.
    func advance(uploadId: String, from: Int64, to: Int64) async throws -> Bool

    /// Records the memory a complete upload became.
    func complete(uploadId: String, memoryId: String) async throws

    /// Forgets an upload (termination).
    func delete(uploadId: String) async throws
}

extension MemoryStore {
    /// The newest `limit` memories.
    public func memories(limit: Int = 500) async throws -> [Memory] {
        try await memories(limit: limit, after: nil)
    }

    /// Every memory, newest first, read a page at a time.
    public func allMemories(pageSize: Int = 500) async throws -> [Memory] {
        var all: [Memory] = []
        while true {
            let page = try await memories(limit: pageSize, after: all.last?.id)
            all += page
            if page.count < pageSize { return all }
        }
    }
}
