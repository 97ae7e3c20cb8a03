public import BeMyEarsCore
import BeMyEarsPostgres
public import Logging

/// A node of a multi-node server over PostgreSQL (`--store postgres://…`): `BeMyEarsPostgres`'s store, its
/// LISTEN/NOTIFY bus as the ``SignalingCluster``, and the pool and migrations as the ``SignalingStoreRuntime``.
public struct PostgresBackend: Sendable {
    public let store: any SignalingStore
    public let cluster: any SignalingCluster
    public let runtime: any SignalingStoreRuntime

    /// - Parameters:
    ///   - url: The database (see `BeMyEarsPostgres` for the accepted forms).
    ///   - node: This process; unique among the processes sharing the database.
    /// - Throws: ``ServerStartupError`` saying what to fix in the URL or node id.
    /// - Parameter password: For a URL without one (`--store-password-file`); else `PGPASSWORD` is used.
    public init(url: String, password: String? = nil, node: NodeID, logger: Logger) throws {
        let store: PostgresSignalingStore
        do {
            store = try PostgresSignalingStore(url: url, password: password, node: node, logger: logger)
        } catch {
            throw ServerStartupError("--store: \(error.description) (syntax: \(StoreLocation.syntax))")
        }
        let bus = PostgresClusterBus(store: store, logger: logger)
        self.store = store
        self.cluster = Bus(bus: bus)
        self.runtime = Runtime(store: store)
    }

    private struct Bus: SignalingCluster {
        let bus: PostgresClusterBus

        func forward(_ envelope: Envelope, to session: SessionID, on node: NodeID) {
            bus.forward(envelope, to: session, on: node)
        }

        func publishPresenceChange() {
            bus.publishPresenceChange()
        }

        func run(delivering hub: SignalingHub, onEvicted: @escaping @Sendable () async -> Void) async throws {
            await bus.run(delivering: hub, onEvicted: onEvicted)
        }

        func waitUntilReady() async throws {
            try await bus.waitUntilListening()
        }
    }

    private struct Runtime: SignalingStoreRuntime {
        let store: PostgresSignalingStore

        func run() async throws {
            await store.run()
        }

        func prepare() async throws {
            try await store.migrate()
        }
    }
}
