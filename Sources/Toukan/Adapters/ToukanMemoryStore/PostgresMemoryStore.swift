public import Foundation
public import Logging
import NIOCore
import Postgres
public import PostgresNIO

/// The server's memories and tus uploads in PostgreSQL, for server processes on several machines (which then share
/// the data directory's files, e.g. over NFS, where SQLite's locks cannot be trusted). An idempotency key is
/// UNIQUE and inserts use `ON CONFLICT DO NOTHING`, so processes racing with one key make one memory; a tus offset
/// moves by compare-and-set.
///
/// Its connection pool runs in ``run()`` (a store made from a URL), or is run by its owner (a store given a shared
/// client); then call ``migrate()`` once, before anything else.
public final class PostgresMemoryStore: MemoryStore {
    private let client: PostgresClient
    private let logger: Logger

    /// - Parameter url: `postgres://user:password@host:5432/database` (see ``PostgresURL``).
    /// - Throws: ``MemoryStoreError`` saying what to fix in the URL.
    public convenience init(url: String, logger: Logger = Logger(label: "memory-store.postgres")) throws {
        do {
            self.init(client: try PostgresClient.bounded(url: url, logger: logger), logger: logger)
        } catch {
            throw MemoryStoreError("The memory database URL cannot be used: \(error.message)")
        }
    }

    /// A store on a pool its owner runs (e.g. one shared with the job queue of the same server process).
    public init(client: PostgresClient, logger: Logger = Logger(label: "memory-store.postgres")) {
        self.client = client
        self.logger = PostgresClient.quiet(logger)
    }

    /// Runs the connection pool until the task is cancelled (not for a store given a shared client: its owner runs
    /// it). Nothing else works while it is not running.
    public func run() async {
        await client.run()
    }

    /// Creates the tables if they are missing; safe when several processes start at once. Frozen once landed:
    /// later changes are new statements after these.
    public func migrate() async throws {
        try await client.withTransaction(logger: logger) { connection in
            // One migrator at a time (a constant lock key: "toukanms" in ASCII).
            try await connection.query("SELECT pg_advisory_xact_lock(8390053734871100787)", logger: logger)
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS toukan_memory (
                    id text PRIMARY KEY,
                    file_name text NOT NULL,
                    path text NOT NULL,
                    size bigint NOT NULL,
                    status text NOT NULL,
                    duration double precision,
                    loudness double precision,
                    transcript text,
                    error text,
                    idempotency_key text UNIQUE,
                    digest bytea,
                    created_at timestamptz NOT NULL,
                    processed_at timestamptz,
                    processing_runs integer NOT NULL DEFAULT 0
                )
                """, logger: logger)
            try await connection.query(
                "CREATE INDEX IF NOT EXISTS toukan_memory_created ON toukan_memory (created_at)", logger: logger)
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS toukan_tus_upload (
                    id text PRIMARY KEY,
                    length bigint NOT NULL,
                    "offset" bigint NOT NULL,
                    metadata text NOT NULL,
                    file_name text NOT NULL,
                    idempotency_key text UNIQUE,
                    memory_id text,
                    created_at timestamptz NOT NULL
                )
                """, logger: logger)
        }
    }

    // MARK: - Memories

    private static let memoryColumns = """
        id, file_name, path, size, status, duration, loudness, transcript, error, idempotency_key, digest, created_at,
        processed_at, processing_runs
        """

    private func memories(_ query: PostgresQuery) async throws -> [Memory] {
        var found: [Memory] = []
        let rows = try await client.query(query, logger: logger)
        for try await row in rows.decode(
            (
                String, String, String, Int64, String, Double?, Double?, String?, String?, String?, ByteBuffer?, Date,
                Date?, Int
            ).self)
        {
            found.append(
                Memory(
                    id: row.0, fileName: row.1, path: row.2, size: row.3,
                    status: Memory.Status(rawValue: row.4) ?? .failed, duration: row.5, loudness: row.6,
                    transcript: row.7, error: row.8, idempotencyKey: row.9, digest: row.10.map { Array(buffer: $0) },
                    createdAt: row.11, processedAt: row.12, processingRuns: row.13))
        }
        return found
    }

    public func insert(_ memory: Memory) async throws -> (memory: Memory, inserted: Bool) {
        let digest = memory.digest.map { ByteBuffer(bytes: $0) }
        // Two tries: an insert that lost a race on the key finds the winner's row on the second.
        for _ in 0..<2 {
            let inserted = try await memories(
                """
                INSERT INTO toukan_memory (id, file_name, path, size, status, idempotency_key, digest, created_at)
                VALUES (\(memory.id), \(memory.fileName), \(memory.path), \(memory.size), \(memory.status.rawValue),
                    \(memory.idempotencyKey), \(digest), \(memory.createdAt))
                ON CONFLICT (idempotency_key) DO NOTHING
                RETURNING \(unescaped: Self.memoryColumns)
                """)
            if !inserted.isEmpty { return (memory, true) }
            if let key = memory.idempotencyKey, let holder = try await self.memory(idempotencyKey: key) {
                return (holder, false)
            }
        }
        throw MemoryStoreError("The memory could not be added; try again.")
    }

    public func memory(idempotencyKey key: String) async throws -> Memory? {
        try await memories(
            "SELECT \(unescaped: Self.memoryColumns) FROM toukan_memory WHERE idempotency_key = \(key)"
        ).first
    }

    public func memory(id: String) async throws -> Memory? {
        try await memories("SELECT \(unescaped: Self.memoryColumns) FROM toukan_memory WHERE id = \(id)").first
    }

    public func memories(limit: Int, after: String?) async throws -> [Memory] {
        guard let after else {
            return try await memories(
                """
                SELECT \(unescaped: Self.memoryColumns) FROM toukan_memory ORDER BY created_at DESC, id LIMIT \(limit)
                """)
        }
        return try await memories(
            """
            SELECT \(unescaped: Self.memoryColumns) FROM toukan_memory m
            WHERE EXISTS (SELECT 1 FROM toukan_memory c WHERE c.id = \(after)
                AND (m.created_at < c.created_at OR (m.created_at = c.created_at AND m.id > c.id)))
            ORDER BY m.created_at DESC, m.id LIMIT \(limit)
            """)
    }

    public func finishProcessing(
        id: String, status: Memory.Status, duration: Double?, loudness: Double?, transcript: String?,
        error: String?, now: Date
    ) async throws {
        let updated = try await memories(
            """
            UPDATE toukan_memory SET status = \(status.rawValue), duration = \(duration), loudness = \(loudness),
                transcript = \(transcript), error = \(error), processed_at = \(now),
                processing_runs = processing_runs + 1
            WHERE id = \(id)
            RETURNING \(unescaped: Self.memoryColumns)
            """)
        guard !updated.isEmpty else { throw MemoryStoreError("No memory has the id \(id).") }
    }

    // MARK: - tus uploads

    private static let uploadColumns =
        #"id, length, "offset", metadata, file_name, idempotency_key, memory_id, created_at"#

    private func uploads(_ query: PostgresQuery) async throws -> [TusUpload] {
        var found: [TusUpload] = []
        let rows = try await client.query(query, logger: logger)
        for try await row in rows.decode((String, Int64, Int64, String, String, String?, String?, Date).self) {
            found.append(
                TusUpload(
                    id: row.0, length: row.1, offset: row.2, metadata: row.3, fileName: row.4, idempotencyKey: row.5,
                    memoryId: row.6, createdAt: row.7))
        }
        return found
    }

    public func insert(_ upload: TusUpload) async throws -> (upload: TusUpload, inserted: Bool) {
        for _ in 0..<2 {
            let inserted = try await uploads(
                """
                INSERT INTO toukan_tus_upload
                    (id, length, "offset", metadata, file_name, idempotency_key, memory_id, created_at)
                VALUES (\(upload.id), \(upload.length), \(upload.offset), \(upload.metadata), \(upload.fileName),
                    \(upload.idempotencyKey), \(upload.memoryId), \(upload.createdAt))
                ON CONFLICT (idempotency_key) DO NOTHING
                RETURNING \(unescaped: Self.uploadColumns)
                """)
            if !inserted.isEmpty { return (upload, true) }
            if let key = upload.idempotencyKey,
                let holder = try await uploads(
                    "SELECT \(unescaped: Self.uploadColumns) FROM toukan_tus_upload WHERE idempotency_key = \(key)"
                ).first
            {
                return (holder, false)
            }
        }
        throw MemoryStoreError("The upload could not be added; try again.")
    }

    public func upload(id: String) async throws -> TusUpload? {
        try await uploads("SELECT \(unescaped: Self.uploadColumns) FROM toukan_tus_upload WHERE id = \(id)").first
    }

    public func advance(uploadId: String, from: Int64, to: Int64) async throws -> Bool {
        let moved = try await uploads(
            """
            UPDATE toukan_tus_upload SET "offset" = \(to) WHERE id = \(uploadId) AND "offset" = \(from)
            RETURNING \(unescaped: Self.uploadColumns)
            """)
        return !moved.isEmpty
    }

    public func complete(uploadId: String, memoryId: String) async throws {
        try await client.query(
            "UPDATE toukan_tus_upload SET memory_id = \(memoryId) WHERE id = \(uploadId)", logger: logger)
    }

    public func delete(uploadId: String) async throws {
        try await client.query("DELETE FROM toukan_tus_upload WHERE id = \(uploadId)", logger: logger)
    }
}
