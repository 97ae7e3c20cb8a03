import Logging
import PostgresNIO

/// The schema, as numbered migrations. A migration is frozen once released: change the schema by appending one.
///
/// ``apply(using:logger:)`` runs every migration the database has not seen, in one transaction under an advisory
/// lock, so nodes that start together neither race nor see half a schema.
enum SchemaMigrations {
    struct Migration {
        var version: Int32
        var description: String
        var statements: [String]
    }

    /// An arbitrary constant naming the advisory lock that serializes migrations ("BMEMIGR" in ASCII).
    static let advisoryLockKey: Int64 = 0x424D_454D_4947_52

    static let all: [Migration] = [
        Migration(
            version: 1,
            description: "registrations, calls, nodes, bus payloads",
            statements: [
                // One row per live session. Usernames sort by byte order (COLLATE "C"), as PRESENCE lists them.
                """
                CREATE TABLE bemyears_registrations (
                    username text COLLATE "C" PRIMARY KEY CHECK (username ~ '^[a-z0-9._-]{3,32}$'),
                    session uuid NOT NULL UNIQUE,
                    role text NOT NULL CHECK (role IN ('caller', 'interpreter')),
                    node text NOT NULL CHECK (octet_length(node) BETWEEN 1 AND 128),
                    registered_at timestamptz NOT NULL,
                    interpreter_state text
                        CHECK (interpreter_state IN ('UNAVAILABLE', 'AVAILABLE', 'RINGING', 'IN_CALL')),
                    call_id uuid,
                    CHECK ((role = 'interpreter') = (interpreter_state IS NOT NULL))
                )
                """,
                "CREATE INDEX bemyears_registrations_node ON bemyears_registrations (node)",
                """
                CREATE INDEX bemyears_registrations_available ON bemyears_registrations (username)
                WHERE interpreter_state = 'AVAILABLE'
                """,
                // Live calls and, for REPORT_ABUSE's 5 minutes, ended ones. `next_deadline` is
                // CallRecord.nextDeadline (NULL once ended or connected), kept in step by every write.
                """
                CREATE TABLE bemyears_calls (
                    id uuid PRIMARY KEY,
                    caller_username text COLLATE "C" NOT NULL,
                    caller_session uuid NOT NULL,
                    caller_node text NOT NULL CHECK (octet_length(caller_node) BETWEEN 1 AND 128),
                    interpreter_username text COLLATE "C" NOT NULL,
                    interpreter_session uuid NOT NULL,
                    interpreter_node text NOT NULL CHECK (octet_length(interpreter_node) BETWEEN 1 AND 128),
                    requested_at timestamptz NOT NULL,
                    ring_timeout_us bigint NOT NULL,
                    answer_timeout_us bigint NOT NULL,
                    connect_timeout_us bigint NOT NULL,
                    state text NOT NULL CHECK (state IN ('ringing', 'accepted', 'ended')),
                    accepted_at timestamptz,
                    answer_relayed boolean NOT NULL,
                    video_visible boolean NOT NULL,
                    ended_at timestamptz,
                    end_reason text CHECK (end_reason IN ('RING_TIMEOUT', 'CONNECT_TIMEOUT', 'HANGUP',
                        'WEBRTC_FAILED', 'HEARTBEAT_EXPIRED', 'DISCONNECTED', 'DECLINED')),
                    next_deadline timestamptz,
                    CHECK ((state = 'accepted') = (accepted_at IS NOT NULL)),
                    CHECK ((state = 'ended') = (ended_at IS NOT NULL AND end_reason IS NOT NULL))
                )
                """,
                """
                CREATE INDEX bemyears_calls_next_deadline ON bemyears_calls (next_deadline)
                WHERE next_deadline IS NOT NULL
                """,
                "CREATE INDEX bemyears_calls_ended_at ON bemyears_calls (ended_at) WHERE ended_at IS NOT NULL",
                // Node liveness: each node's heartbeat, in the database's clock.
                """
                CREATE TABLE bemyears_nodes (
                    node text PRIMARY KEY CHECK (octet_length(node) BETWEEN 1 AND 128),
                    started_at timestamptz NOT NULL DEFAULT clock_timestamp(),
                    heartbeat_at timestamptz NOT NULL DEFAULT clock_timestamp()
                )
                """,
                // Bodies of bus messages too large for a NOTIFY payload; the notice carries the id. The target
                // node deletes the row when it reads it; rows left behind are swept after a while.
                """
                CREATE TABLE bemyears_bus_payloads (
                    id uuid PRIMARY KEY,
                    target_node text NOT NULL,
                    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
                    body text NOT NULL CHECK (octet_length(body) <= 1048576)
                )
                """,
                "CREATE INDEX bemyears_bus_payloads_created_at ON bemyears_bus_payloads (created_at)",
                // One round trip per batch of bus notices: store the large bodies, then NOTIFY each notice in
                // array order. It runs as one statement, so rows and notifications commit together, and
                // PostgreSQL delivers a transaction's notifications in the order they were sent.
                """
                CREATE FUNCTION bemyears_bus_publish(
                    channel text, notices text[], payload_ids uuid[], payload_targets text[], payload_bodies text[]
                ) RETURNS integer LANGUAGE plpgsql AS $$
                DECLARE
                    notice text;
                    sent integer := 0;
                BEGIN
                    INSERT INTO bemyears_bus_payloads (id, target_node, body)
                    SELECT * FROM unnest(payload_ids, payload_targets, payload_bodies)
                    ON CONFLICT (id) DO NOTHING;  -- a batch repeated after an uncertain commit
                    FOREACH notice IN ARRAY notices LOOP
                        PERFORM pg_notify(channel, notice);
                        sent := sent + 1;
                    END LOOP;
                    RETURN sent;
                END
                $$
                """,
            ]
        )
    ]

    static func apply(using client: PostgresClient, logger: Logger) async throws {
        do {
            try await migrate(using: client, logger: logger)
        } catch let error as PostgresTransactionError {
            if let refusal = error.closureError as? PostgresStoreError { throw refusal }
            throw error
        }
    }

    private static func migrate(using client: PostgresClient, logger: Logger) async throws {
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(advisoryLockKey))", logger: logger)
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS bemyears_migrations (
                    version integer PRIMARY KEY,
                    description text NOT NULL,
                    applied_at timestamptz NOT NULL DEFAULT clock_timestamp()
                )
                """,
                logger: logger
            )
            var applied: Set<Int32> = []
            for try await version in try await connection.query(
                "SELECT version FROM bemyears_migrations",
                logger: logger
            ).decode(Int32.self) {
                applied.insert(version)
            }
            let known = Set(all.map(\.version))
            if let unknown = applied.subtracting(known).max() {
                throw PostgresStoreError(
                    code: .schemaTooNew,
                    message: "The database schema is at version \(unknown), newer than this program knows "
                        + "(\(known.max() ?? 0)); run a release at least as new as the one that migrated it."
                )
            }
            for migration in all where !applied.contains(migration.version) {
                for statement in migration.statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query(
                    """
                    INSERT INTO bemyears_migrations (version, description)
                    VALUES (\(migration.version), \(migration.description))
                    """,
                    logger: logger
                )
            }
        }
    }
}
