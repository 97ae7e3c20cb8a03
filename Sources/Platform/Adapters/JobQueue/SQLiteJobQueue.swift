public import Foundation
import GRDB
import SQLiteFiles

/// A ``JobQueue`` in a SQLite file (WAL): workers in several processes may share the file, each claim is one
/// `BEGIN IMMEDIATE` transaction, so two workers never hold the same job.
public final class SQLiteJobQueue: JobQueue {
    private let writer: any DatabaseWriter

    /// Opens or creates the queue in the SQLite file at `path` (created 0600; its directory must exist).
    /// - Throws: ``JobQueueError`` with ``JobQueueError/Code/unavailable`` when the file cannot be used.
    public convenience init(path: String) throws {
        do {
            var configuration = Configuration()
            configuration.label = "SQLiteJobQueue"
            // Another process may hold the write lock for a moment: wait for it rather than fail.
            configuration.busyMode = .timeout(10)
            try self.init(writer: SQLiteFile.pool(path: path, configuration: configuration))
        } catch let error as JobQueueError {
            throw error
        } catch {
            throw JobQueueError(.unavailable, "The job database \(path) cannot be opened: \(error)")
        }
    }

    /// An empty queue in memory, for tests.
    public static func inMemory() throws -> SQLiteJobQueue {
        try SQLiteJobQueue(writer: DatabaseQueue())
    }

    private init(writer: any DatabaseWriter) throws {
        self.writer = writer
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE job (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        kind TEXT NOT NULL,
                        payload TEXT NOT NULL,
                        key TEXT,
                        state TEXT NOT NULL,
                        attempts INTEGER NOT NULL DEFAULT 0,
                        runAfter DOUBLE NOT NULL,
                        worker TEXT,
                        leaseUntil DOUBLE,
                        lastError TEXT,
                        createdAt DOUBLE NOT NULL,
                        updatedAt DOUBLE NOT NULL,
                        UNIQUE (kind, key)
                    );
                    CREATE INDEX job_runnable ON job (state, runAfter, id);
                    """)
        }
        try migrator.migrate(writer)
    }

    /// Runs `body` in a `BEGIN IMMEDIATE` transaction: the write lock is taken first, so a read inside cannot go
    /// stale before the write.
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

    public func enqueue(kind: String, payload: String, key: String?, runAfter: Date, now: Date) async throws -> Job {
        try JobQueueError.checkBounds("kind", kind, max: JobQueueLimits.maxKindBytes)
        try JobQueueError.checkBounds("payload", payload, max: JobQueueLimits.maxPayloadBytes)
        if let key { try JobQueueError.checkBounds("key", key, max: JobQueueLimits.maxKeyBytes) }
        return try await transaction { db in
            if let key,
                let existing = try Row.fetchOne(
                    db, sql: "SELECT * FROM job WHERE kind = ? AND key = ?", arguments: [kind, key])
            {
                return Self.job(existing)
            }
            let row = try Row.fetchOne(
                db,
                sql: """
                    INSERT INTO job (kind, payload, key, state, attempts, runAfter, createdAt, updatedAt)
                    VALUES (?, ?, ?, 'queued', 0, ?, ?, ?) RETURNING *
                    """,
                arguments: [
                    kind, payload, key, runAfter.timeIntervalSince1970, now.timeIntervalSince1970,
                    now.timeIntervalSince1970,
                ])
            return Self.job(row!)
        }
    }

    public func claim(kinds: [String], worker: String, lease: Duration, now: Date) async throws -> Job? {
        try JobQueueError.checkBounds("worker", worker, max: JobQueueLimits.maxWorkerBytes)
        guard !kinds.isEmpty else { return nil }
        let marks = Array(repeating: "?", count: kinds.count).joined(separator: ", ")
        let time = now.timeIntervalSince1970
        var builder: StatementArguments = [worker, time + lease.timeInterval, time]
        builder += StatementArguments(kinds)
        builder += [time, time]
        let arguments = builder
        return try await transaction { db in
            try Row.fetchOne(
                db,
                sql: """
                    UPDATE job SET state = 'running', worker = ?, leaseUntil = ?, attempts = attempts + 1,
                        updatedAt = ?
                    WHERE id = (
                        SELECT id FROM job
                        WHERE kind IN (\(marks))
                          AND ((state = 'queued' AND runAfter <= ?) OR (state = 'running' AND leaseUntil <= ?))
                        ORDER BY runAfter, id LIMIT 1)
                    RETURNING *
                    """,
                arguments: arguments
            ).map(Self.job)
        }
    }

    public func renew(_ id: Int64, worker: String, lease: Duration, now: Date) async throws {
        let time = now.timeIntervalSince1970
        try await updateHeld(
            id, worker: worker, now: now, sql: "leaseUntil = ?, updatedAt = ?", [time + lease.timeInterval, time])
    }

    public func complete(_ id: Int64, worker: String, now: Date) async throws {
        let time = now.timeIntervalSince1970
        try await updateHeld(
            id, worker: worker, now: now,
            sql: "state = 'succeeded', leaseUntil = NULL, lastError = NULL, updatedAt = ?", [time])
    }

    public func fail(_ id: Int64, worker: String, error: String, retryAt: Date?, now: Date) async throws {
        let text = String(decoding: error.utf8.prefix(JobQueueLimits.maxErrorBytes), as: UTF8.self)
        let time = now.timeIntervalSince1970
        if let retryAt {
            try await updateHeld(
                id, worker: worker, now: now,
                sql: "state = 'queued', runAfter = ?, leaseUntil = NULL, lastError = ?, updatedAt = ?",
                [retryAt.timeIntervalSince1970, text, time])
        } else {
            try await updateHeld(
                id, worker: worker, now: now, sql: "state = 'failed', leaseUntil = NULL, lastError = ?, updatedAt = ?",
                [text, time])
        }
    }

    /// Applies `assignments` to job `id` if `worker` still holds it (running, its lease not lapsed).
    private func updateHeld(
        _ id: Int64, worker: String, now: Date, sql assignments: String, _ values: StatementArguments
    ) async throws {
        var builder = values
        builder += [id, worker, now.timeIntervalSince1970]
        let arguments = builder
        let changed = try await transaction { db in
            try db.execute(
                sql:
                    "UPDATE job SET \(assignments) WHERE id = ? AND state = 'running' AND worker = ? AND leaseUntil > ?",
                arguments: arguments)
            return db.changesCount
        }
        guard changed == 1 else { throw JobQueueError.leaseLost(id, worker: worker) }
    }

    public func retry(_ id: Int64, now: Date) async throws {
        let time = now.timeIntervalSince1970
        let changed = try await transaction { db in
            try db.execute(
                sql: """
                    UPDATE job SET state = 'queued', attempts = 0, runAfter = ?, worker = NULL, updatedAt = ?
                    WHERE id = ? AND state = 'failed'
                    """,
                arguments: [time, time, id])
            return db.changesCount
        }
        guard changed == 1 else {
            guard let job = try await job(id) else { throw JobQueueError(.notFound, "No job has id \(id).") }
            throw JobQueueError(.invalidArgument, "Job \(id) is \(job.state.rawValue), not failed: nothing to retry.")
        }
    }

    public func job(_ id: Int64) async throws -> Job? {
        try await writer.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM job WHERE id = ?", arguments: [id]).map(Self.job)
        }
    }

    public func counts() async throws -> [Job.State: Int] {
        try await writer.read { db in
            var counts: [Job.State: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT state, count(*) AS n FROM job GROUP BY state") {
                if let state = Job.State(rawValue: row["state"]) { counts[state] = row["n"] }
            }
            return counts
        }
    }

    private static func job(_ row: Row) -> Job {
        func date(_ column: String) -> Date? {
            (row[column] as Double?).map { Date(timeIntervalSince1970: $0) }
        }
        return Job(
            id: row["id"], kind: row["kind"], payload: row["payload"], key: row["key"],
            state: Job.State(rawValue: row["state"]) ?? .failed, attempts: row["attempts"],
            runAfter: date("runAfter")!, worker: row["worker"], leaseUntil: date("leaseUntil"),
            lastError: row["lastError"], createdAt: date("createdAt")!, updatedAt: date("updatedAt")!)
    }
}
