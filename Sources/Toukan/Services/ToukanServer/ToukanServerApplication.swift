public import ConnectionGuard
import Foundation
import HTTPTypes
public import Hummingbird
import HummingbirdCore
import JobQueue
public import Logging
import NIOCore
import Postgres
import PostgresNIO
import ServiceLifecycle
import Synchronization
import ToukanMemoryStore

/// Everything ``buildToukanServer(_:)`` needs.
public struct ToukanServerConfiguration: Sendable {
    public var host: String
    public var port: Int
    public var dataDirectory: String
    /// `postgres://…` for the memories, tus uploads and job queue of several server processes; nil: SQLite files in
    /// the data directory.
    public var database: String?
    public var maximumUploadBytes: Int64
    public var workers: Int
    public var transcribe: Bool
    /// This process's name in the job queue (workers are `<node>-<n>`).
    public var node: String
    public var logger: Logger
    /// Called once the server listens, with the actual port.
    public var onReady: (@Sendable (_ port: Int) async -> Void)?
    /// Against slow and greedy clients: a request head within 10 s (of connecting or of the last answer), idle
    /// connections closed after 60 s (an upload that stalls that long resumes with tus), 64 connections per address.
    public var connectionLimits = ConnectionLimits()

    public init(
        host: String = "127.0.0.1", port: Int = 8090, dataDirectory: String, database: String? = nil,
        maximumUploadBytes: Int64 = 2 << 30, workers: Int = 1, transcribe: Bool = true, node: String? = nil,
        logger: Logger = Logger(label: "toukan-server"), onReady: (@Sendable (_ port: Int) async -> Void)? = nil
    ) {
        self.host = host
        self.port = port
        self.dataDirectory = dataDirectory
        self.database = database
        self.maximumUploadBytes = maximumUploadBytes
        self.workers = workers
        self.transcribe = transcribe
        self.node =
            node ?? "\(ProcessInfo.processInfo.hostName.prefix(40))-\(ProcessInfo.processInfo.processIdentifier)"
        self.logger = logger
        self.onReady = onReady
    }
}

/// Builds the Toukan server: `POST /upload`, tus at `/files/`, `GET /memories…`, the review page at `/`,
/// `GET /health`, and the processing workers. Run it with `runService()`.
/// - Throws: when the data directory, the memory store or the job queue cannot be opened.
public func buildToukanServer(_ configuration: ToukanServerConfiguration) async throws -> some ApplicationProtocol {
    let logger = configuration.logger
    let directory = ServerFiles(root: configuration.dataDirectory)
    try directory.prepare()
    directory.removeStaleIncoming(now: Date())
    var services: [any Service] = []
    let store: any MemoryStore
    let queue: any JobQueue
    var migrations: [@Sendable () async throws -> Void] = []
    if let url = configuration.database {
        // Several server processes: memories, tus uploads and jobs in one PostgreSQL, over one pool.
        let client = try PostgresClient.bounded(url: url, logger: logger)
        services.append(PostgresPoolService(client: client))
        let memories = PostgresMemoryStore(client: client, logger: logger)
        let jobs = PostgresJobQueue(client: client, logger: logger)
        migrations = [memories.migrate, jobs.migrate]
        store = memories
        queue = jobs
    } else {
        store = try SQLiteMemoryStore(path: directory.memoryDatabase)
        queue = try SQLiteJobQueue(path: directory.jobDatabase)
    }
    let (wakeUps, wakeContinuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    let intake = MemoryIntake(
        directory: directory, store: store, queue: queue, wake: { wakeContinuation.yield() }, logger: logger)
    services.append(
        ProcessingWorkers(
            intake: intake, count: configuration.workers, node: configuration.node,
            transcribe: configuration.transcribe, wakeUps: wakeUps))

    let ready = ReadyFlag()
    let router = Router()
    router.add(middleware: ReviewPageHeaders())
    router.get("/health") { _, _ -> Response in
        let isReady = ready.isReady
        return Response(
            status: isReady ? .ok : .serviceUnavailable,
            headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: isReady ? "ok\n" : "starting\n")))
    }
    let uploads = UploadRoute(intake: intake, maximumBytes: configuration.maximumUploadBytes)
    router.post("/upload") { request, _ in try await uploads.handle(request) }
    TusRoutes(intake: intake, maximumBytes: configuration.maximumUploadBytes).add(to: router)
    MemoryRoutes(intake: intake).add(to: router)
    try ReviewPage.bundled().add(to: router)

    let onReady = configuration.onReady
    let guarding = ConnectionGuard(configuration.connectionLimits) { address, reason in
        logger.info("connection closed", metadata: ["address": "\(address)", "reason": "\(reason.rawValue)"])
    }
    var app = Application(
        router: router,
        server: .http1(
            configuration: HTTP1Channel.Configuration(
                additionalChannelHandlers: guarding.handlers(),
                idleTimeout: configuration.connectionLimits.idleTimeAmount
            )
        ),
        configuration: ApplicationConfiguration(address: .hostname(configuration.host, port: configuration.port)),
        services: services,
        onServerRunning: { channel in
            ready.mark()
            await onReady?(channel.localAddress?.port ?? configuration.port)
        },
        logger: logger
    )
    app.beforeServerStarts { [migrations] in
        for migrate in migrations { try await migrate() }
        try await intake.requeueUnfinished(now: Date())
    }
    return app
}

/// Whether the server listens.
final class ReadyFlag: Sendable {
    private let flag = Atomic(false)

    func mark() { flag.store(true, ordering: .releasing) }

    var isReady: Bool { flag.load(ordering: .acquiring) }
}

/// Runs the PostgreSQL connection pool until shutdown.
struct PostgresPoolService: Service {
    let client: PostgresClient

    func run() async throws {
        await cancelWhenGracefulShutdown { await client.run() }
    }
}
