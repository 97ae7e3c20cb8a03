import Foundation
import HTTPTypes
import JobQueue
import Logging
import ToukanCore
import ToukanMemoryStore

/// Where a received file becomes a memory, for `POST /upload` and a completed tus upload alike: the idempotency
/// rule, the move into `audio/`, the row, and the processing job.
struct MemoryIntake: Sendable {
    static let jobKind = "process-memory"

    let directory: ServerFiles
    let store: any MemoryStore
    let queue: any JobQueue
    /// Wakes this process's workers when a job is added.
    let wake: @Sendable () -> Void
    let logger: Logger

    /// A file received whole (fsynced) at `path`, outside `audio/`.
    struct Received: Sendable {
        var path: String
        var fileName: String
        var size: Int64
        var digest: [UInt8]
        var key: IdempotencyKey?
    }

    /// Makes a memory of `file`, or finds the one its idempotency key already made (the file is then removed).
    /// - Returns: The memory id, and whether it is new.
    /// - Throws: ``HTTPRefusal`` 422 when the key was used for other content.
    func accept(_ file: Received, now: Date) async throws -> (memoryId: String, isNew: Bool) {
        if let key = file.key, let existing = try await store.memory(idempotencyKey: key.rawValue) {
            return try settle(file, against: existing)
        }
        let id = UUID().uuidString.lowercased()
        let paths = directory.audioPath(memoryId: id)
        try FileManager.default.moveItem(atPath: file.path, toPath: paths.absolute)
        // Owner-only, whichever way it came (a tus upload begun by an older server was made 0644).
        try? FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: paths.absolute)
        let memory = Memory(
            id: id, fileName: file.fileName, path: paths.relative, size: file.size, idempotencyKey: file.key?.rawValue,
            digest: file.digest, createdAt: now)
        let (holder, inserted) = try await store.insert(memory)
        guard inserted else {
            // Another request with the same key won the race: the same rule applies to its memory.
            try? FileManager.default.moveItem(atPath: paths.absolute, toPath: file.path)
            return try settle(file, against: holder)
        }
        try await enqueue(memoryId: id, now: now)
        logger.info("event=memory_created memory=\(id) bytes=\(file.size)")
        return (id, true)
    }

    /// Queues processing for a memory (a keyed job: asking twice runs it once).
    func enqueue(memoryId: String, now: Date) async throws {
        _ = try await queue.enqueue(kind: Self.jobKind, payload: memoryId, key: memoryId, runAfter: now, now: now)
        wake()
    }

    /// Queues every memory still `processing` (a process that died between its row and its job).
    func requeueUnfinished(now: Date) async throws {
        for memory in try await store.allMemories() where memory.status == .processing {
            _ = try await queue.enqueue(
                kind: Self.jobKind, payload: memory.id, key: memory.id, runAfter: now, now: now)
        }
        wake()
    }

    private func settle(_ file: Received, against existing: Memory) throws -> (memoryId: String, isNew: Bool) {
        try? FileManager.default.removeItem(atPath: file.path)
        let record = IdempotencyRule.Record(
            key: file.key!, length: existing.size, digest: existing.digest, memoryId: existing.id)
        switch IdempotencyRule.decide(existing: record, length: file.size, digest: file.digest) {
        case .new, .repeatOf:
            logger.info("event=upload_repeated memory=\(existing.id)")
            return (existing.id, false)
        case .conflict(let message):
            throw HTTPRefusal(.unprocessableContent, "idempotency_key_reused", message)
        }
    }
}
