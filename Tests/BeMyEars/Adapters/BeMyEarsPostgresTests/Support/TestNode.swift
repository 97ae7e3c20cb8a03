import BeMyEarsCore
import BeMyEarsPostgres
import BeMyEarsTestSupport
import CanonicalJSON
import Synchronization
import TestSupport
import Testing

/// One server node without sockets: a hub over a PostgreSQL store, connected to the other nodes by the real
/// `LISTEN`/`NOTIFY` bus, its store and bus running in tasks that ``stop()`` cancels (as a crash would: nothing is
/// cleaned up in the database).
final class TestNode: Sendable {
    /// Short timings so eviction is observable in a test.
    static let fastBus = PostgresClusterBus.Configuration(
        heartbeatInterval: .milliseconds(200),
        staleAfter: .milliseconds(1_500)
    )

    let store: PostgresSignalingStore
    let bus: PostgresClusterBus
    let outbound: NodeOutbound
    let hub: SignalingHub
    let clock: ManualClock
    private let tasks = Mutex<[Task<Void, Never>]>([])
    private let evictionCount = Mutex(0)

    var node: NodeID { hub.node }

    /// How often the bus called `onEvicted`.
    var evictions: Int { evictionCount.withLock { $0 } }

    private init(store: PostgresSignalingStore, bus: PostgresClusterBus, clock: ManualClock, callIDs: CallIDGenerator) {
        self.store = store
        self.bus = bus
        self.clock = clock
        self.outbound = NodeOutbound(bus: bus)
        self.hub = SignalingHub(
            node: store.node,
            store: store,
            outbound: outbound,
            clock: clock,
            callIDs: callIDs,
            configuration: .immediatePresence
        )
    }

    /// Starts a node and returns once its bus listens.
    static func start(
        _ name: String,
        url: String,
        clock: ManualClock,
        firstCallNumber: Int = 1,
        configuration: PostgresClusterBus.Configuration = TestNode.fastBus
    ) async throws -> TestNode {
        let store = try PostgresSignalingStore(url: url, node: NodeID(name), maximumConnections: 8)
        let bus = PostgresClusterBus(store: store, configuration: configuration)
        let node = TestNode(store: store, bus: bus, clock: clock, callIDs: .sequential(from: firstCallNumber))
        node.tasks.withLock { $0.append(Task { await store.run() }) }
        do {
            try await withTimeout(.seconds(30), "migrating") { try await store.migrate() }
            node.tasks.withLock {
                $0.append(Task { await bus.run(delivering: node.hub) { node.evictionCount.withLock { $0 += 1 } } })
            }
            try await withTimeout(.seconds(30), "waiting for LISTEN") { try await bus.waitUntilListening() }
        } catch {
            await node.stop()
            throw error
        }
        return node
    }

    /// Stops the bus and the pool without any cleanup (like a crashed process).
    func stop() async {
        let running = tasks.withLock { tasks in
            defer { tasks = [] }
            return tasks
        }
        for (index, task) in running.enumerated().reversed() {
            task.cancel()
            // A loop that ignores cancellation would hang the whole test run: fail this test instead, naming it.
            if await !Self.ends(task, within: .seconds(20)) {
                Issue.record(
                    "\(node): the \(index == 0 ? "store" : "bus") did not stop within 20 s of its cancellation")
            }
        }
    }

    /// Whether `task` finishes within `bound` (it is left running otherwise).
    private static func ends(_ task: Task<Void, Never>, within bound: Duration) async -> Bool {
        let outcome = FirstOutcome()
        return await withCheckedContinuation { continuation in
            outcome.hold(continuation)
            Task {
                await task.value
                outcome.resume(true)
            }
            Task {
                try? await Task.sleep(for: bound)
                outcome.resume(false)
            }
        }
    }

    /// Resumes a continuation with the first of several outcomes.
    private final class FirstOutcome: Sendable {
        private let waiting = Mutex<CheckedContinuation<Bool, Never>?>(nil)

        func hold(_ continuation: CheckedContinuation<Bool, Never>) {
            waiting.withLock { $0 = continuation }
        }

        func resume(_ value: Bool) {
            let continuation = waiting.withLock { waiting in
                defer { waiting = nil }
                return waiting
            }
            continuation?.resume(returning: value)
        }
    }

    /// A connected, unregistered client.
    func connect() async -> TestClient {
        let client = TestClient(id: .random(), node: self)
        await hub.connect(client.id)
        return client
    }

    /// A registered caller; its REGISTERED and first PRESENCE are consumed.
    func caller(_ name: String) async throws -> TestClient {
        let client = await connect()
        await client.send(.register, payload: ["username": .string(name), "role": "caller"])
        let first = try await client.receive(count: 2)
        try #require(first.map(\.type) == [.registered, .presence], "\(name) did not register: \(first)")
        return client
    }

    /// A registered interpreter, online unless told otherwise; its messages consumed.
    func interpreter(_ name: String, online: Bool = true) async throws -> TestClient {
        let client = await connect()
        await client.send(.register, payload: ["username": .string(name), "role": "interpreter"])
        try #require(try await client.receive(count: 1).map(\.type) == [.registered], "\(name) did not register")
        if online {
            await client.send(.setState, payload: ["state": "AVAILABLE"])
            try #require(try await client.receive(count: 1) == [.state(.available)])
        }
        return client
    }
}
