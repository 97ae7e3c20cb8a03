public import Foundation
import GRDB
import SQLiteFiles

/// The server's memories and tus uploads in one SQLite file (WAL, 0600) in the data directory. Several server
/// processes on one machine may share it: every write is one `BEGIN IMMEDIATE` transaction, and an idempotency key
/// is unique, so two processes racing with one key make one memory.
public final class SQLiteMemoryStore: MemoryStore {
    private let writer: any DatabaseWriter

    /// Opens or creates the store at `path` (its directory must exist).
    /// - Throws: ``MemoryStoreError`` saying which file cannot be used.
    public convenience init(path: String) throws {
        do {
            var configuration = Configuration()
            configuration.label = "SQLiteMemoryStore"
            configuration.busyMode = .timeout(10)
            try self.init(writer: SQLiteFile.pool(path: path, configuration: configuration))
        } catch let error as MemoryStoreError {
            throw error
        } catch {
            throw MemoryStoreError("The memory database \(path) cannot be opened: \(error)")
        }
    }

    /// An empty store in memory, for tests.
    public static func inMemory() throws -> SQLiteMemoryStore {
        try SQLiteMemoryStore(writer: DatabaseQueue())
    }

    private init(writer: any DatabaseWriter) throws {
        self.writer = writer
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE memory (
                        id TEXT PRIMARY KEY,
                        fileName TEXT NOT NULL,
                        path TEXT NOT NULL,
                        size INTEGER NOT NULL,
                        status TEXT NOT NULL,
                        duration DOUBLE,
                        loudness DOUBLE,
                        transcript TEXT,
                        error TEXT,
                        idempotencyKey TEXT UNIQUE,
                        digest BLOB,
                        createdAt DOUBLE NOT NULL,
                        processedAt DOUBLE,
                        processingRuns INTEGER NOT NULL DEFAULT 0
                    );
                    CREATE INDEX memory_created ON memory (createdAt);
                    CREATE TABLE tusUpload (
                        id TEXT PRIMARY KEY,
                        length INTEGER NOT NULL,
                        "offset" INTEGER NOT NULL,
                        metadata TEXT NOT NULL,
                        fileName TEXT NOT NULL,
                        idempotencyKey TEXT UNIQUE,
                        memoryId TEXT,
                        createdAt DOUBLE NOT NULL
                    );
                    """)
        }
        try migrator.migrate(writer)
    }

    private func transaction<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await writer.writeWithoutTransaction { db in
            var result: T?
            try db.inTransaction(.immediate) {
                result = try body(db)
                return .commit
            }
            return result!
        }
    }

    // MARK: - Memories

    public func insert(_ memory: Memory) async throws -> (memory: Memory, inserted: Bool) {
        try await transaction { db in
            if let key = memory.idempotencyKey,
                let existing = try Row.fetchOne(
                    db, sql: "SELECT * FROM memory WHERE idempotencyKey = ?", arguments: [key])
            {
                return (Self.memory(existing), false)
            }
            try db.execute(
                sql: """
                    INSERT INTO memory (id, fileName, path, size, status, idempotencyKey, digest, createdAt)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    memory.id, memory.fileName, memory.path, memory.size, memory.status.rawValue,
                    memory.idempotencyKey, memory.digest.map { Data($0) }, memory.createdAt.timeIntervalSince1970,
                ])
            return (memory, true)
        }
    }

    public func memory(idempotencyKey key: String) async throws -> Memory? {
        try await writer.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM memory WHERE idempotencyKey = ?", arguments: [key]).map(
                Self.memory)
        }
    }

    public func memory(id: String) async throws -> Memory? {
        try await writer.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM memory WHERE id = ?", arguments: [id]).map(Self.memory)
        }
    }

    public func memories(limit: Int, after: String?) async throws -> [Memory] {
        try await writer.read { db in
            guard let after else {
                return try Row.fetchAll(
                    db, sql: "SELECT * FROM memory ORDER BY createdAt DESC, id LIMIT ?", arguments: [limit]
                ).map(Self.memory)
            }
            return try Row.fetchAll(
                db,
                sql: """
                    SELECT m.* FROM memory m, (SELECT createdAt, id FROM memory WHERE id = ?) c
                    WHERE m.createdAt < c.createdAt OR (m.createdAt = c.createdAt AND m.id > c.id)
                    ORDER BY m.createdAt DESC, m.id LIMIT ?
                    """, arguments: [after, limit]
            ).map(Self.memory)
        }
    }

    public func finishProcessing(
        id: String, status: Memory.Status, duration: Double?, loudness: Double?, transcript: String?,
        error: String?, now: Date
    ) async throws {
        try await transaction { db in
            try db.execute(
                sql: """
                    UPDATE memory SET status = ?, duration = ?, loudness = ?, transcript = ?, error = ?,
                        processedAt = ?, processingRuns = processingRuns + 1
                    WHERE id = ?
                    """,
                arguments: [
                    status.rawValue, duration, loudness, transcript, error, now.timeIntervalSince1970, id,
                ])
            guard db.changesCount == 1 else { throw MemoryStoreError("No memory has the id \(id).") }
        }
    }

    private static func memory(_ row: Row) -> Memory {
        Memory(
            id: row["id"], fileName: row["fileName"], path: row["path"], size: row["size"],
            status: Memory.Status(rawValue: row["status"]) ?? .failed, duration: row["duration"],
            loudness: row["loudness"], transcript: row["transcript"], error: row["error"],
            idempotencyKey: row["idempotencyKey"], digest: (row["digest"] as Data?).map { Array($0) },
            createdAt: Date(timeIntervalSince1970: row["createdAt"]),
            processedAt: (row["processedAt"] as Double?).map(Date.init(timeIntervalSince1970:)),
            processingRuns: row["processingRuns"])
    }

    // MARK: - tus uploads

    public func insert(_ upload: TusUpload) async throws -> (upload: TusUpload, inserted: Bool) {
        try await transaction { db in
            if let key = upload.idempotencyKey,
                let existing = try Row.fetchOne(
                    db, sql: "SELECT * FROM tusUpload WHERE idempotencyKey = ?", arguments: [key])
            {
                return (Self.upload(existing), false)
            }
            try db.execute(
                sql: """
                    INSERT INTO tusUpload (id, length, "offset", metadata, fileName, idempotencyKey, createdAt)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    upload.id, upload.length, upload.offset, upload.metadata, upload.fileName, upload.idempotencyKey,
                    upload.createdAt.timeIntervalSince1970,
                ])
            return (upload, true)
        }
    }

    public func upload(id: String) async throws -> TusUpload? {
        try await writer.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM tusUpload WHERE id = ?", arguments: [id]).map(Self.upload)
        }
    }

    public func advance(uploadId: String, from: Int64, to: Int64) async throws -> Bool {
        try await transaction { db in
            try db.execute(
                sql: #"UPDATE tusUpload SET "offset" = ? WHERE id = ? AND "offset" = ?"#,
                arguments: [to, uploadId, from])
            return db.changesCount == 1
        }
    }

    public func complete(uploadId: String, memoryId: String) async throws {
        try await transaction { db in
            try db.execute(
                sql: "UPDATE tusUpload SET memoryId = ? WHERE id = ?", arguments: [memoryId, uploadId])
        }
    }

    public func delete(uploadId: String) async throws {
        try await transaction { db in
            try db.execute(sql: "DELETE FROM tusUpload WHERE id = ?", arguments: [uploadId])
        }
    }

    private static func upload(_ row: Row) -> TusUpload {
        TusUpload(
            id: row["id"], length: row["length"], offset: row["offset"], metadata: row["metadata"],
            fileName: row["fileName"], idempotencyKey: row["idempotencyKey"], memoryId: row["memoryId"],
            createdAt: Date(timeIntervalSince1970: row["createdAt"]))
    }
}
