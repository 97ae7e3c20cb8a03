public import BeMyEarsCore
public import ConnectionGuard
public import Logging

/// Everything ``buildApplication(_:)`` needs. The defaults are the protocol's (BEMYEARS-PROTOCOL.md) and a
/// single node with an in-memory store listening on 127.0.0.1:8080.
public struct BeMyEarsServerConfiguration: Sendable {
    /// Address to listen on (`0.0.0.0` for every interface).
    public var host: String
    /// Port to listen on; 0 picks a free one (reported to ``onReady``).
    public var port: Int
    /// This process in a shared store (``NodeID/local`` for a single node).
    public var node: NodeID
    /// Registrations, interpreter states and calls.
    public var store: any SignalingStore
    /// The channel to the other nodes of a shared store; nil for a single node.
    public var cluster: (any SignalingCluster)?
    /// The store's connection pool and schema, run before the server accepts connections; nil in memory.
    public var storeRuntime: (any SignalingStoreRuntime)?
    /// The protocol's numbers (message size, heartbeat, TTL, call timeouts, rate limit) and fixed ICE servers.
    public var signaling: SignalingConfiguration
    /// TURN REST credentials minted for every REGISTERED; nil: only ``SignalingConfiguration/iceServers``.
    public var turn: TURNCredentials?
    /// How often the hub's timers are checked.
    public var tickInterval: Duration
    /// Unwritten outgoing bytes allowed per socket before the client is disconnected (1 MiB).
    public var maximumOutboundBytes: Int
    /// How long a frame may wait for a socket that takes nothing (the client stopped reading) before the client is
    /// disconnected. Shorter than every call deadline (10 s), so a stalled party's call ends `DISCONNECTED`.
    public var stalledWriteTimeout: Duration
    /// Advertise `_bemyears._tcp` over mDNS/DNS-SD.
    public var advertisesService: Bool
    /// The DNS-SD instance name.
    public var serviceName: String
    /// The server's log (stderr in the `YYYY-MM-DD HH:MM:SS` format of seed §18.1).
    public var logger: Logger
    /// Called once the server listens, with the actual port.
    public var onReady: (@Sendable (_ port: Int) async -> Void)?
    /// Which web pages may open `/ws` (the server's own, and `--allowed-origin`).
    public var origins = OriginPolicy.ownOnly
    /// Against slow and greedy clients: request-head deadline (10 s), HTTP idle timeout (60 s), connections per
    /// address (64; `--max-connections-per-address`).
    public var connectionLimits = ConnectionLimits()

    public init(
        host: String = "127.0.0.1",
        port: Int = 8080,
        node: NodeID = .local,
        store: any SignalingStore = InMemorySignalingStore(),
        cluster: (any SignalingCluster)? = nil,
        storeRuntime: (any SignalingStoreRuntime)? = nil,
        signaling: SignalingConfiguration = .standard,
        turn: TURNCredentials? = nil,
        tickInterval: Duration = .milliseconds(250),
        maximumOutboundBytes: Int = 1 << 20,
        stalledWriteTimeout: Duration = .seconds(5),
        advertisesService: Bool = true,
        serviceName: String? = nil,
        logger: Logger = SignalingLogHandler.logger(),
        onReady: (@Sendable (_ port: Int) async -> Void)? = nil
    ) {
        self.host = host
        self.port = port
        self.node = node
        self.store = store
        self.cluster = cluster
        self.storeRuntime = storeRuntime
        self.signaling = signaling
        self.turn = turn
        self.tickInterval = tickInterval
        self.maximumOutboundBytes = maximumOutboundBytes
        self.stalledWriteTimeout = stalledWriteTimeout
        self.advertisesService = advertisesService
        self.serviceName = serviceName ?? BonjourAdvertisement.defaultInstanceName()
        self.logger = logger
        self.onReady = onReady
    }
}
