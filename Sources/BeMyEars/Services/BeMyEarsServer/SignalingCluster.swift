public import BeMyEarsCore

/// The channel between the nodes of a multi-node server (several processes sharing one PostgreSQL store): carries
/// messages for sessions held by another node and "presence changed" notices, in one order per sending node
/// (``SignalingOutbound/forward(_:to:on:)``). A single-node server has none.
public protocol SignalingCluster: Sendable {
    /// Hands `envelope` to `node`, which delivers it to its session `session`. Must not block.
    func forward(_ envelope: Envelope, to session: SessionID, on node: NodeID)

    /// Tells every other node that the set of AVAILABLE interpreters changed. Must not block.
    func publishPresenceChange()

    /// Receives what other nodes send and hands it to `hub` (``SignalingHub/deliver(_:to:)``,
    /// ``SignalingHub/presenceDidChange()``), in order, until cancelled.
    /// - Parameter onEvicted: Called when the other nodes took this one for dead (its sessions are gone from the
    ///   store): the server closes every socket so that clients reconnect.
    func run(delivering hub: SignalingHub, onEvicted: @escaping @Sendable () async -> Void) async throws

    /// Returns once ``run(delivering:onEvicted:)`` receives from the other nodes (then the server may accept
    /// connections).
    func waitUntilReady() async throws
}

/// A store that needs a running part (a connection pool) and preparation (a schema) before the server may use it.
public protocol SignalingStoreRuntime: Sendable {
    /// Runs until cancelled or graceful shutdown.
    func run() async throws

    /// Called once while ``run()`` runs, before the server accepts connections (e.g. migrations).
    func prepare() async throws
}
