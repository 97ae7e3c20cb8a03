import BeMyEarsCore
import ConnectionGuard
public import Hummingbird
import HummingbirdCore
import LocalWebApp
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle
import Synchronization

/// Builds the BeMyEars server: the signaling WebSocket at `/ws`, the browser client at `/`, `GET /health`, the
/// hub's ticker, the cluster channel (several nodes) and the `_bemyears._tcp` advertisement.
///
/// One ``SignalingHub`` per process. Run it with `runService()` (SIGINT/SIGTERM shut it down gracefully).
/// - Throws: ``ServerStartupError`` when the bundled browser client is missing.
public func buildApplication(_ configuration: BeMyEarsServerConfiguration) async throws -> some ApplicationProtocol {
    let logger = configuration.logger
    let files = try StaticFiles.bundled()
    let outbound = WebSocketOutbound(cluster: configuration.cluster, logger: logger)
    let hub = SignalingHub(
        node: configuration.node,
        store: configuration.store,
        outbound: outbound,
        clock: SystemSignalingClock(),
        configuration: configuration.signaling,
        iceServers: configuration.turn?.provider
    )
    let readiness = Readiness()
    let sockets = SignalingSockets(
        hub: hub,
        registry: outbound,
        logger: logger,
        readLimit: SignalingSockets.readLimit(for: configuration.signaling),
        outboundLimit: configuration.maximumOutboundBytes,
        closeGrace: .seconds(5)
    )
    let origins = configuration.origins
    let admits: @Sendable (HTTPRequestHead) -> Bool = { head in
        let origin = head.headers["Origin"].first
        // Refused before any WebSocket exists (the upgrade fails: HTTP 400); a page's script cannot read why, so
        // the operator's log says it, with the fix.
        guard origins.permits(origin: origin, host: head.headers["Host"].first) else {
            let shown = String(origin?.prefix(100) ?? "")
            logger.warning(
                "event=origin_refused origin=\(shown) (a page of another site; allow it with --allowed-origin if it is yours)"
            )
            return false
        }
        return true
    }

    // The shared store and the cluster channel first: services stop in reverse order, so they outlive the server.
    var services: [any Service] = []
    let sharedState = SharedStateService(
        runtime: configuration.storeRuntime,
        cluster: configuration.cluster,
        hub: hub,
        onEvicted: {
            logger.warning("event=node_evicted (closing every session; clients reconnect)")
            outbound.closeAll(code: CloseCode(rawValue: 1012))
        }
    )
    if configuration.storeRuntime != nil || configuration.cluster != nil {
        services.append(sharedState)
    }
    services.append(PeriodicService(interval: configuration.tickInterval) { await hub.tick() })
    services.append(HubWakeService(requests: outbound.wakeRequests, hub: hub))
    let stallTimeout = configuration.stalledWriteTimeout
    let stallAmount = TimeAmount(stallTimeout)
    services.append(
        PeriodicService(interval: min(stallTimeout / 5, .seconds(1))) {
            outbound.dropStalled(now: .now(), after: stallAmount)
        })
    // Started last, so stopped first: WebSockets live in their channels, not in the server's tasks, so they are
    // closed here (1001, going away) when the server shuts down.
    services.append(SocketShutdownService(outbound: outbound, grace: .seconds(6)))
    let (ports, announcePort) = AsyncStream.makeStream(of: Int.self)
    if configuration.advertisesService {
        services.append(
            BonjourAdvertisement.make(ports: ports, instanceName: configuration.serviceName, logger: logger))
    }
    let onReady = configuration.onReady
    // Slow and greedy clients: the first request head (a WebSocket upgrade or a page) within 10 s, later ones
    // within 10 s of the last answer, idle HTTP connections closed after 60 s, 64 connections per address. The
    // guard's byte-level half goes in front of the upgrade pipeline (it decodes HTTP itself); reported without the
    // address (seed §18.1 keeps the log free of anything that identifies a person).
    let guarding = ConnectionGuard(configuration.connectionLimits) { _, reason in
        logger.notice("event=connection_refused reason=\(reason.rawValue)")
    }
    let http1 = HTTP1Channel.Configuration(
        additionalChannelHandlers: guarding.laterRequestHandlers(),
        idleTimeout: configuration.connectionLimits.idleTimeAmount
    )
    var app = Application(
        router: buildRouter(files: files, readiness: readiness),
        server: HTTPServerBuilder { responder in
            GuardedChildChannel(
                SignalingChildChannel(responder: responder, http1: http1, sockets: sockets, admits: admits),
                guard: guarding
            )
        },
        configuration: ApplicationConfiguration(address: .hostname(configuration.host, port: configuration.port)),
        services: services,
        onServerRunning: { channel in
            let port = channel.localAddress?.port ?? configuration.port
            readiness.markReady()
            announcePort.yield(port)
            announcePort.finish()
            await onReady?(port)
        },
        logger: logger
    )
    if configuration.storeRuntime != nil || configuration.cluster != nil {
        app.beforeServerStarts {
            try await sharedState.waitUntilReady()
        }
    }
    return app
}

/// Builds the server (``buildApplication(_:)``) and runs it until SIGINT or SIGTERM, then shuts down gracefully.
public func runServer(_ configuration: BeMyEarsServerConfiguration) async throws {
    let app = try await buildApplication(configuration)
    try await app.runService()
}

/// The HTTP routes: `GET /health` (200 once the server listens, 503 before) and the browser client, every
/// response with the security headers (``SecurityHeadersMiddleware``).
func buildRouter(files: StaticAssets, readiness: Readiness) -> Router<BeMyEarsRequestContext> {
    let router = Router(context: BeMyEarsRequestContext.self)
    router.add(middleware: SecurityHeadersMiddleware())
    router.get("/health") { _, _ -> Response in
        let ready = readiness.isReady
        return Response(
            status: ready ? .ok : .serviceUnavailable,
            headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: ready ? "ok\n" : "starting\n"))
        )
    }
    files.addRoutes(to: router)
    return router
}

/// Whether the server is up (listening, with its hub and ticker).
final class Readiness: Sendable {
    private let ready = Atomic(false)

    func markReady() { ready.store(true, ordering: .releasing) }

    var isReady: Bool { ready.load(ordering: .acquiring) }
}

/// Runs a shared store (connection pool, then migrations) and the cluster channel, until graceful shutdown;
/// the server starts accepting connections once both are ready (``waitUntilReady()``).
struct SharedStateService: Service {
    let runtime: (any SignalingStoreRuntime)?
    let cluster: (any SignalingCluster)?
    let hub: SignalingHub
    let onEvicted: @Sendable () async -> Void
    private let readiness = AsyncThrowingStream<Void, any Error>.makeStream()

    init(
        runtime: (any SignalingStoreRuntime)?,
        cluster: (any SignalingCluster)?,
        hub: SignalingHub,
        onEvicted: @escaping @Sendable () async -> Void
    ) {
        self.runtime = runtime
        self.cluster = cluster
        self.hub = hub
        self.onEvicted = onEvicted
    }

    func run() async throws {
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                if let runtime {
                    group.addTask { try await runtime.run() }
                    // Let the pool's run() begin first: queries issued before it are served, but postgres-nio warns.
                    try await Task.sleep(for: .milliseconds(50))
                    try await runtime.prepare()
                }
                if let cluster {
                    group.addTask { [hub, onEvicted] in try await cluster.run(delivering: hub, onEvicted: onEvicted) }
                    try await cluster.waitUntilReady()
                }
                readiness.continuation.yield()
                readiness.continuation.finish()
                try? await gracefulShutdown()
                group.cancelAll()
            }
        } catch {
            readiness.continuation.finish(throwing: error)
            throw error
        }
    }

    /// Returns once the store is prepared and the cluster receives; throws what stopped them.
    func waitUntilReady() async throws {
        for try await _ in readiness.stream { return }
        throw ServerStartupError("the shared store stopped before it was ready")
    }
}

/// Closes every WebSocket (1001, going away) when the server shuts down, and waits until they are gone or `grace`
/// has passed: they live in their channels, not in the HTTP server's tasks.
struct SocketShutdownService: Service {
    let outbound: WebSocketOutbound
    let grace: Duration

    func run() async throws {
        try? await gracefulShutdown()
        outbound.closeAll(code: CloseCode(rawValue: 1001))
        let deadline = ContinuousClock.now + grace
        while outbound.connectionCount > 0, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
    }
}
