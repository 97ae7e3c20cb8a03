public import Foundation
public import Logging
import Postgres
public import PostgresNIO

/// A ``JobQueue`` in PostgreSQL, for workers on several machines: a claim takes the oldest runnable row with
/// `FOR UPDATE SKIP LOCKED`, so concurrent workers never wait on each other nor take the same job.
///
/// Its connection pool runs in ``run()`` (a queue made from a URL or configuration), or is run by its owner (a
/// queue given a shared client); then call ``migrate()`` once, before anything else.
public final class PostgresJobQueue: JobQueue {
    private let client: PostgresClient
    private let logger: Logger

    /// - Parameter url: `postgres://user:password@host:5432/database` (see ``PostgresURL``).
    /// - Throws: ``JobQueueError`` with ``JobQueueError/Code/invalidArgument`` when the URL cannot be used.
    public convenience init(url: String, logger: Logger = Logger(label: "job-queue.postgres")) throws {
        let configuration: PostgresClient.Configuration
        do {
            configuration = try PostgresURL(url).configuration
        } catch {
            throw JobQueueError(.invalidArgument, error.message)
        }
        self.init(configuration: configuration, logger: logger)
    }

    public convenience init(
        configuration: PostgresClient.Configuration, logger: Logger = Logger(label: "job-queue.postgres")
    ) {
        self.init(
            client: PostgresClient(
                configuration: configuration.boundingWaits, backgroundLogger: PostgresClient.quiet(logger)),
            logger: logger)
    }

    /// A queue on a pool its owner runs (e.g. one shared with the other stores of a server process).
    public init(client: PostgresClient, logger: Logger = Logger(label: "job-queue.postgres")) {
        self.client = client
        self.logger = PostgresClient.quiet(logger)
    }

    /// Runs the connection pool until the task is cancelled (not for a queue given a shared client: its owner runs
    /// it). Nothing else works while it is not running.
    public func run() async {
        await client.run()
    }

    /// Creates the table if it is missing; safe when several processes start at once.
    public func migrate() async throws {
        try await client.withTransaction(logger: logger) { connection in
            // One migrator at a time (a constant lock key: "jobqueue" in ASCII).
            try await connection.query("SELECT pg_advisory_xact_lock(7668480918154085733)", logger: logger)
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS job_queue (
                    id bigserial PRIMARY KEY,
                    kind text NOT NULL,
                    payload text NOT NULL,
                    key text,
                    state text NOT NULL,
                    attempts integer NOT NULL DEFAULT 0,
                    run_after timestamptz NOT NULL,
                    worker text,
                    lease_until timestamptz,
                    last_error text,
                    created_at timestamptz NOT NULL,
                    updated_at timestamptz NOT NULL,
                    UNIQUE (kind, key)
                )
                """, logger: logger)
            try await connection.query(
                "CREATE INDEX IF NOT EXISTS job_queue_runnable ON job_queue (state, run_after, id)", logger: logger)
        }
    }

    private static let columns =
        "id, kind, payload, key, state, attempts, run_after, worker, lease_until, last_error, created_at, updated_at"

    private typealias Columns = (Int64, String, String, String?, String, Int, Date, String?, Date?, String?, Date, Date)

    private func jobs(_ query: PostgresQuery) async throws -> [Job] {
        var found: [Job] = []
        for try await row in try await client.query(query, logger: logger).decode(Columns.self) {
            found.append(
                Job(
                    id: row.0, kind: row.1, payload: row.2, key: row.3, state: Job.State(rawValue: row.4) ?? .failed,
                    attempts: row.5, runAfter: row.6, worker: row.7, leaseUntil: row.8, lastError: row.9,
                    createdAt: row.10, updatedAt: row.11))
        }
        return found
    }

    public func enqueue(kind: String, payload: String, key: String?, runAfter: Date, now: Date) async throws -> Job {
        try JobQueueError.checkBounds("kind", kind, max: JobQueueLimits.maxKindBytes)
        try JobQueueError.checkBounds("payload", payload, max: JobQueueLimits.maxPayloadBytes)
        if let key { try JobQueueError.checkBounds("key", key, max: JobQueueLimits.maxKeyBytes) }
        // Two tries: an insert that lost a race on the key finds the winner's row on the second.
        for _ in 0..<2 {
            let inserted = try await jobs(
                """
                INSERT INTO job_queue (kind, payload, key, state, attempts, run_after, created_at, updated_at)
                VALUES (\(kind), \(payload), \(key), 'queued', 0, \(runAfter), \(now), \(now))
                ON CONFLICT (kind, key) DO NOTHING
                RETURNING \(unescaped: Self.columns)
                """)
            if let job = inserted.first { return job }
            if let key,
                let existing = try await jobs(
                    "SELECT \(unescaped: Self.columns) FROM job_queue WHERE kind = \(kind) AND key = \(key)"
                ).first
            {
                return existing
            }
        }
        throw JobQueueError(.unavailable, "The job could not be added; try again.")
    }

    public func claim(kinds: [String], worker: String, lease: Duration, now: Date) async throws -> Job? {
        try JobQueueError.checkBounds("worker", worker, max: JobQueueLimits.maxWorkerBytes)
        guard !kinds.isEmpty else { return nil }
        let until = now.addingTimeInterval(lease.timeInterval)
        return try await jobs(
            """
            UPDATE job_queue SET state = 'running', worker = \(worker), lease_until = \(until),
                attempts = attempts + 1, updated_at = \(now)
            WHERE id = (
                SELECT id FROM job_queue
                WHERE kind = ANY(\(kinds))
                  AND ((state = 'queued' AND run_after <= \(now)) OR (state = 'running' AND lease_until <= \(now)))
                ORDER BY run_after, id
                FOR UPDATE SKIP LOCKED
                LIMIT 1)
            RETURNING \(unescaped: Self.columns)
            """
        ).first
    }

    public func renew(_ id: Int64, worker: String, lease: Duration, now: Date) async throws {
        let until = now.addingTimeInterval(lease.timeInterval)
        try await held(
            id, worker: worker,
            """
            UPDATE job_queue SET lease_until = \(until), updated_at = \(now)
            WHERE id = \(id) AND state = 'running' AND worker = \(worker) AND lease_until > \(now)
            RETURNING \(unescaped: Self.columns)
            """)
    }

    public func complete(_ id: Int64, worker: String, now: Date) async throws {
        try await held(
            id, worker: worker,
            """
            UPDATE job_queue SET state = 'succeeded', lease_until = NULL, last_error = NULL, updated_at = \(now)
            WHERE id = \(id) AND state = 'running' AND worker = \(worker) AND lease_until > \(now)
            RETURNING \(unescaped: Self.columns)
            """)
    }

    public func fail(_ id: Int64, worker: String, error: String, retryAt: Date?, now: Date) async throws {
        let text = String(decoding: error.utf8.prefix(JobQueueLimits.maxErrorBytes), as: UTF8.self)
        let state = retryAt == nil ? "failed" : "queued"
        try await held(
            id, worker: worker,
            """
            UPDATE job_queue SET state = \(state), run_after = COALESCE(\(retryAt), run_after), lease_until = NULL,
                last_error = \(text), updated_at = \(now)
            WHERE id = \(id) AND state = 'running' AND worker = \(worker) AND lease_until > \(now)
            RETURNING \(unescaped: Self.columns)
            """)
    }

    private func held(_ id: Int64, worker: String, _ query: PostgresQuery) async throws {
        guard try await jobs(query).count == 1 else { throw JobQueueError.leaseLost(id, worker: worker) }
    }

    public func retry(_ id: Int64, now: Date) async throws {
        let changed = try await jobs(
            """
            UPDATE job_queue SET state = 'queued', attempts = 0, run_after = \(now), worker = NULL,
                updated_at = \(now)
            WHERE id = \(id) AND state = 'failed'
            RETURNING \(unescaped: Self.columns)
            """)
        guard changed.isEmpty else { return }
        guard let job = try await job(id) else { throw JobQueueError(.notFound, "No job has id \(id).") }
        throw JobQueueError(.invalidArgument, "Job \(id) is \(job.state.rawValue), not failed: nothing to retry.")
    }

    public func job(_ id: Int64) async throws -> Job? {
        try await jobs("SELECT \(unescaped: Self.columns) FROM job_queue WHERE id = \(id)").first
    }

    public func counts() async throws -> [Job.State: Int] {
        var counts: [Job.State: Int] = [:]
        let rows = try await client.query("SELECT state, count(*) FROM job_queue GROUP BY state", logger: logger)
        for try await (state, count) in rows.decode((String, Int).self) {
            if let state = Job.State(rawValue: state) { counts[state] = count }
        }
        return counts
    }
}
