public import BeMyEarsCore
public import Logging
import Postgres
public import PostgresNIO

/// The shared state of a BeMyEars cluster in PostgreSQL: BeMyEarsCore's ``SignalingStore`` for several server
/// processes (nodes) over one database.
///
/// Every method is one transaction (a single statement, or `BEGIN … COMMIT` around row locks). The rules are the
/// core's pure functions — ``CallRecord/apply(_:at:)`` and ``Registration/apply(_:of:)`` run inside the
/// transaction on the locked rows — so this type only supplies atomicity and storage:
///
/// - usernames are the primary key of `bemyears_registrations`: of two racing REGISTERs the second gets
///   ``RegistrationOutcome/usernameTaken``;
/// - ``createCall(_:)`` locks the caller's and the interpreter's rows (`SELECT … FOR UPDATE`, in username order),
///   so of any number of concurrent CALL_REQUESTs for one interpreter, from any nodes, exactly one sees AVAILABLE;
/// - ``updateCall(_:with:at:)`` locks the call's row, then its parties' rows, so a call ends exactly once.
///
/// Start it with ``run()`` (the connection pool) and ``migrate()`` before use; see the module README.
public final class PostgresSignalingStore: Sendable {
    /// The node this process is; the ``PostgresClusterBus`` built on this store heartbeats it.
    public let node: NodeID
    let client: PostgresClient
    /// For this module's own messages.
    let logger: Logger
    /// Handed to postgres-nio: never below `.info`, because its trace output contains row contents and
    /// notification payloads (SDP, ICE candidates: seed §18.2 forbids logging them).
    let queryLogger: Logger

    /// The longest node identifier accepted, in UTF-8 bytes (the columns allow 128: a retired identity adds 17).
    public static let maximumNodeIDBytes = 100

    /// A store for the database at `url`.
    ///
    /// - Parameters:
    ///   - url: `postgres://user:password@host:port/database?sslmode=…` (see the module README for the forms).
    ///   - password: The password when the URL has none (else `PGPASSWORD`, as libpq does).
    ///   - node: This process's identity, unique among the processes sharing the database.
    ///   - logger: Where the adapter logs (never message contents).
    ///   - maximumConnections: The pool's size. The bus keeps one connection for `LISTEN`.
    /// - Throws: ``PostgresStoreError`` (``PostgresStoreError/Code/invalidURL``,
    ///   ``PostgresStoreError/Code/invalidNodeID``).
    public convenience init(
        url: String,
        password: String? = nil,
        node: NodeID,
        logger: Logger = Logger(label: "bemyears.postgres"),
        maximumConnections: Int = 20
    ) throws(PostgresStoreError) {
        var configuration: PostgresClient.Configuration
        do {
            var parsed = try PostgresURL(url)
            if parsed.password == nil { parsed.password = password }
            configuration = parsed.configuration
        } catch {
            throw PostgresStoreError(code: .invalidURL, message: error.message)
        }
        configuration.options.maximumConnections = max(2, maximumConnections)
        try self.init(configuration: configuration, node: node, logger: logger)
    }

    /// A store over a ready postgres-nio configuration.
    /// - Throws: ``PostgresStoreError`` with ``PostgresStoreError/Code/invalidNodeID``.
    public init(
        configuration: PostgresClient.Configuration,
        node: NodeID,
        logger: Logger = Logger(label: "bemyears.postgres")
    ) throws(PostgresStoreError) {
        guard !node.rawValue.isEmpty, node.rawValue.utf8.count <= Self.maximumNodeIDBytes else {
            throw PostgresStoreError(
                code: .invalidNodeID,
                message: "The node identifier must be 1 to \(Self.maximumNodeIDBytes) bytes long."
            )
        }
        var configuration = configuration
        // A transaction never waits on a lock or a statement forever: the hub answers INTERNAL_ERROR instead.
        configuration.options.additionalStartupParameters.append(contentsOf: [
            ("lock_timeout", "5s"),
            ("statement_timeout", "10s"),
            ("idle_in_transaction_session_timeout", "30s"),
        ])
        if !configuration.options.additionalStartupParameters.contains(where: { $0.0 == "application_name" }) {
            configuration.options.additionalStartupParameters.append(("application_name", "bemyears"))
        }
        self.node = node
        self.logger = logger
        var queryLogger = logger
        queryLogger.logLevel = max(logger.logLevel, .info)
        self.queryLogger = queryLogger
        self.client = PostgresClient(configuration: configuration, backgroundLogger: queryLogger)
    }

    /// Runs the connection pool until the task is cancelled (or, inside a swift-service-lifecycle `ServiceGroup`,
    /// until graceful shutdown). Nothing else works while it is not running. Call it once.
    public func run() async {
        await client.run()
    }

    /// Creates or upgrades the schema; safe to call from several nodes starting at once.
    /// - Throws: ``PostgresStoreError`` with ``PostgresStoreError/Code/schemaTooNew`` when a newer release has
    ///   migrated the database; database errors as postgres-nio throws them.
    public func migrate() async throws {
        try await SchemaMigrations.apply(using: client, logger: queryLogger)
    }

    /// How long one store step may take, waiting for a pooled connection included: the pool itself would wait
    /// for a database that does not answer for ever, and the hub's session queue with it.
    static let operationTimeout: Duration = .seconds(10)

    static let timedOut = PostgresStoreError(
        code: .timedOut,
        message: "The database did not answer within \(operationTimeout); check that PostgreSQL is reachable."
    )

    /// Runs one store step: throws ``PostgresStoreError/Code/timedOut`` after ``operationTimeout``, or
    /// `CancellationError` as soon as the caller is cancelled, whether or not the step has ended (it is cancelled
    /// and left to finish on its own; a statement already running is bounded by `statement_timeout`).
    func bounded<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        // Not a task group: its scope would wait for a query that ignores cancellation (PostgresNIO does not
        // cancel a statement the server never answers), and the bound would not bound anything.
        let outcome = FirstOutcome<T>()
        let work = Task {
            do {
                outcome.resolve(.success(try await body()))
            } catch {
                outcome.resolve(.failure(error))
            }
        }
        let deadline = Task {
            try? await Task.sleep(for: Self.operationTimeout)
            outcome.resolve(.failure(Self.timedOut))
        }
        let result = await withTaskCancellationHandler {
            await outcome.wait()
        } onCancel: {
            outcome.resolve(.failure(CancellationError()))
        }
        deadline.cancel()
        work.cancel()
        return try result.get()
    }

    /// Runs `body` in one transaction, again (up to twice more) when PostgreSQL aborted it for a deadlock or a
    /// serialization failure — the transaction was rolled back, so repeating it is safe.
    func transaction<Result: Sendable>(
        _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await client.withTransaction(logger: queryLogger) { connection in
                    try await body(connection)
                }
            } catch let error as PostgresTransactionError where attempt < 3 && Self.isTransient(error) {
                logger.debug("bemyears: transaction retried", metadata: ["attempt": "\(attempt)"])
                continue
            }
        }
    }

    private static func isTransient(_ error: PostgresTransactionError) -> Bool {
        guard let failure = (error.closureError ?? error.commitError) as? PSQLError,
            let state = failure.serverInfo?[.sqlState]
        else { return false }
        return state == "40001" || state == "40P01"  // serialization_failure, deadlock_detected
    }
}
