public import BeMyEarsCore
import Foundation
public import Logging
import Synchronization

/// The channel between the nodes of a cluster sharing a ``PostgresSignalingStore``, and their liveness.
///
/// **Channel.** One PostgreSQL `LISTEN`/`NOTIFY` channel carries, from every node to every node, the messages a
/// hub forwards to sessions on other nodes (``forward(_:to:on:)``) and its presence-change notices
/// (``publishPresenceChange()``). One task per node publishes them in the order they were enqueued, a batch per
/// statement; PostgreSQL delivers notifications in commit order, so every node receives each sender's notices
/// in order and hands them to its hub in that order (``SignalingHub/deliver(_:to:)``,
/// ``SignalingHub/presenceDidChange()``). A message whose notice would reach PostgreSQL's 8000-byte payload
/// limit (an SDP offer can be 64 KiB) is stored in `bemyears_bus_payloads` by the same statement and the notice
/// carries the row's id; the receiver reads and deletes the row before it handles the next notice, so order holds.
///
/// **Liveness.** Each node upserts its row of `bemyears_nodes` every ``Configuration/heartbeatInterval`` (the
/// database's clock, so the nodes' clocks do not matter). Every node looks for nodes whose heartbeat is older than
/// ``Configuration/staleAfter`` (or that hold registrations without a heartbeat row) and calls
/// ``SignalingHub/evictNode(_:)`` for them: their sessions are unregistered and their calls end with DISCONNECTED.
/// Several nodes may do so at once; the store's atomic `unregister` makes each session end once.
///
/// Limits: a notification sent while a node's `LISTEN` connection is down is lost to that node (it notices the
/// gap by sequence number, logs it and refreshes presence); the echo of its own heartbeat tells a node that its
/// listener went deaf, and it reconnects.
public final class PostgresClusterBus: Sendable {
    /// The bus's numbers.
    public struct Configuration: Sendable {
        /// The `LISTEN`/`NOTIFY` channel: a lowercase SQL identifier, the same on every node.
        public var channel: String
        /// How often the node heartbeats, echoes and looks for dead nodes.
        public var heartbeatInterval: Duration
        /// A node whose heartbeat is older than this is evicted.
        public var staleAfter: Duration
        /// Notices waiting to be published at most; beyond that new ones are dropped (and logged).
        public var maximumQueuedNotices: Int

        public init(
            channel: String = "bemyears",
            heartbeatInterval: Duration = .seconds(5),
            staleAfter: Duration = .seconds(30),
            maximumQueuedNotices: Int = 10_000
        ) {
            self.channel = channel
            self.heartbeatInterval = heartbeatInterval
            self.staleAfter = staleAfter
            self.maximumQueuedNotices = maximumQueuedNotices
        }
    }

    /// Something waiting to be published.
    enum Outgoing: Sendable {
        case forward(Envelope, SessionID, NodeID)
        case presence
        case echo
    }

    struct State {
        var queue: [Outgoing] = []
        var queueHead = 0
        var dropped = 0
        var isRunning = false
        var hasFinished = false
        var isListening = false
        var listeningWaiters: [UUID: CheckedContinuation<Void, any Error>] = [:]
        /// When the listener last took a notice off the channel (or started listening).
        var lastHeard = ContinuousClock.now
        /// Whether the listener is handling a notice now (its time does not count as silence).
        var isHandling = false
        var tracker = SequenceTracker()

        var queuedCount: Int { queue.count - queueHead }
    }

    let store: PostgresSignalingStore
    let configuration: Configuration
    let logger: Logger
    /// This node's run, so that receivers tell a restarted node's notices from a repeat of old ones.
    let epoch: String
    let state = Mutex(State())
    /// Wakes the publisher; holds at most one pending wake-up.
    let wakeUps: AsyncStream<Void>
    let wake: AsyncStream<Void>.Continuation

    /// Notices for ``Outgoing/forward(_:_:_:)`` larger than this are refused (a message body; the protocol's
    /// limit is 64 KiB).
    static let maximumMessageBytes = 1_048_576
    /// How long a stored large message waits for its receiver before it is swept away.
    static let storedMessageLifetime: Duration = .seconds(300)

    /// - Parameters:
    ///   - store: The store whose connection pool and node identity the bus uses.
    ///   - configuration: Channel name and timings; the same on every node.
    ///   - logger: Where the bus logs (node identities and counts, never message contents).
    public init(
        store: PostgresSignalingStore,
        configuration: Configuration = Configuration(),
        logger: Logger = Logger(label: "bemyears.postgres.bus")
    ) {
        precondition(Self.isValidChannel(configuration.channel), "PostgresClusterBus: invalid channel name")
        precondition(
            configuration.heartbeatInterval > .zero && configuration.staleAfter > configuration.heartbeatInterval,
            "PostgresClusterBus: staleAfter must exceed a positive heartbeatInterval"
        )
        self.store = store
        self.configuration = configuration
        self.logger = logger
        self.epoch = String(UInt64.random(in: 1...UInt64.max), radix: 16)
        (wakeUps, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// This node.
    public var node: NodeID { store.node }

    static func isValidChannel(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, (1...63).contains(bytes.count) else { return false }
        func isLetter(_ byte: UInt8) -> Bool { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || byte == 0x5F }
        func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
        return isLetter(first) && bytes.allSatisfy { isLetter($0) || isDigit($0) }
    }

    // MARK: - What the hub's outbound calls

    /// Hands a message to the node that holds `session` (``SignalingOutbound/forward(_:to:on:)``). Returns at
    /// once; the message is published after everything enqueued before it.
    public func forward(_ envelope: Envelope, to session: SessionID, on node: NodeID) {
        enqueue(.forward(envelope, session, node))
    }

    /// Tells every other node that the set of AVAILABLE interpreters changed
    /// (``SignalingOutbound/publishPresenceChange()``). Returns at once.
    public func publishPresenceChange() {
        enqueue(.presence)
    }

    func enqueue(_ item: Outgoing) {
        let accepted = state.withLock { state -> Bool in
            if case .presence = item, state.queuedCount > 0, case .presence = state.queue[state.queue.count - 1] {
                return true  // "presence changed" twice in a row says no more than once
            }
            guard state.queuedCount < configuration.maximumQueuedNotices else {
                state.dropped += 1
                return false
            }
            state.queue.append(item)
            return true
        }
        if accepted {
            wake.yield()
        } else {
            logger.error(
                "bemyears.bus: publish queue full; a notice was dropped",
                metadata: ["node": "\(node)", "limit": "\(configuration.maximumQueuedNotices)"]
            )
        }
    }

    // MARK: - Running

    /// Runs the bus until the task is cancelled: takes over this node's leftovers from a previous run, listens
    /// and delivers into `hub` in channel order, publishes what was enqueued, heartbeats, and evicts dead nodes.
    /// Call it once, while ``PostgresSignalingStore/run()`` runs and after ``PostgresSignalingStore/migrate()``.
    ///
    /// - Parameters:
    ///   - hub: This node's hub (its node must be the store's).
    ///   - onEvicted: Called when this node finds that the others took it for dead (its heartbeat was older than
    ///     ``Configuration/staleAfter``): its sessions may be gone from the store, so the server should close all
    ///     of them (clients reconnect and register again).
    public func run(delivering hub: SignalingHub, onEvicted: @escaping @Sendable () async -> Void = {}) async {
        precondition(hub.node == node, "PostgresClusterBus: the hub belongs to another node")
        let isFirstRun = state.withLock { state in
            defer { state.isRunning = true }
            return !state.isRunning && !state.hasFinished
        }
        guard isFirstRun else {
            logger.error("bemyears.bus: run(delivering:) called twice; the second call returns at once")
            return
        }
        defer { finish() }
        guard await start() else { return }
        await withDiscardingTaskGroup { group in
            group.addTask { await self.publishLoop() }
            group.addTask { await self.listenLoop(hub) }
            group.addTask { await self.heartbeatLoop(onEvicted: onEvicted) }
            group.addTask { await self.sweepLoop(hub) }
        }
    }

    /// Returns once the bus is listening (the node can serve: it will receive what other nodes send it).
    /// - Throws: ``PostgresStoreError`` with ``PostgresStoreError/Code/notListening`` if the bus stopped first;
    ///   `CancellationError` if the waiting task is cancelled.
    public func waitUntilListening() async throws {
        let id = UUID()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> Result<Void, any Error>? in
                    if state.isListening { return .success(()) }
                    if state.hasFinished { return .failure(Self.notListening) }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    state.listeningWaiters[id] = continuation
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.listeningWaiters.removeValue(forKey: id) }
            waiter?.resume(throwing: CancellationError())
        }
    }

    static let notListening = PostgresStoreError(
        code: .notListening,
        message: "The cluster bus stopped before it was listening; see the log for the database error."
    )

    func setListening(_ listening: Bool) {
        let waiters = state.withLock { state -> [UUID: CheckedContinuation<Void, any Error>] in
            state.isListening = listening
            state.lastHeard = .now
            state.isHandling = false
            guard listening else { return [:] }
            defer { state.listeningWaiters = [:] }
            return state.listeningWaiters
        }
        for waiter in waiters.values { waiter.resume() }
    }

    private func finish() {
        let waiters = state.withLock { state in
            state.isListening = false
            state.hasFinished = true
            defer { state.listeningWaiters = [:] }
            return state.listeningWaiters
        }
        for waiter in waiters.values { waiter.resume(throwing: Self.notListening) }
    }

    /// Waits `duration`; false when the task was cancelled.
    func pause(_ duration: Duration) async -> Bool {
        do {
            try await Task.sleep(for: duration)
            return true
        } catch {
            return false
        }
    }
}
