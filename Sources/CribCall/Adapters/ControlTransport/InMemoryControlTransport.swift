// The in-memory twin of the QUIC adapter. Its types live in one file, against the one-type-per-file rule, because
// they only make sense together and the twin is meant to be read in one sitting next to ControlConnection.swift.

public import DeviceIdentity
import NIOCore
import Synchronization

/// Builds linked pairs of in-memory control connections, for testing services without sockets.
public enum InMemoryControlTransport {
    /// Two linked ends of one control connection: what one sends, the other receives.
    /// - Parameters:
    ///   - client: The certificate the client end presents; it is the server end's `peer`.
    ///   - server: The certificate the server end presents; it is the client end's `peer`.
    /// - Returns: Both ends. `client.peer == server` and `server.peer == client`.
    public static func pair(
        client: PeerCertificate,
        server: PeerCertificate
    ) -> (client: InMemoryControlConnection, server: InMemoryControlConnection) {
        pair(client: client, server: server, clientAddress: "in-memory:client", serverAddress: "in-memory:server")
    }

    static func pair(
        client: PeerCertificate,
        server: PeerCertificate,
        clientAddress: String,
        serverAddress: String
    ) -> (client: InMemoryControlConnection, server: InMemoryControlConnection) {
        let link = InMemoryLink()
        let clientEnd = InMemoryControlConnection(link: link, side: .client, peer: server, remoteAddress: serverAddress)
        let serverEnd = InMemoryControlConnection(link: link, side: .server, peer: client, remoteAddress: clientAddress)
        return (clientEnd, serverEnd)
    }
}

/// One end of an in-memory control connection (see `InMemoryControlTransport.pair(client:server:)`).
///
/// Frames are delivered in order, synchronously, into the peer's `InboundFrameQueue`, so everything sent before
/// `close(code:)` is received before the peer sees the end of `inbound`. There is no flow-control window: `send`
/// never suspends for backpressure.
public final class InMemoryControlConnection: ControlConnection {
    public let peer: PeerCertificate
    public let remoteAddress: String
    public let inbound: ControlFrameSequence

    private let link: InMemoryLink
    private let side: InMemoryLink.Side

    init(link: InMemoryLink, side: InMemoryLink.Side, peer: PeerCertificate, remoteAddress: String) {
        self.link = link
        self.side = side
        self.peer = peer
        self.remoteAddress = remoteAddress
        self.inbound = ControlFrameSequence(link.queue(of: side))
    }

    /// Frames `payload` and hands it to the peer.
    /// - Parameter payload: 1…262,144 bytes.
    /// - Throws: `ControlTransportError.closed` once the connection is closed; `ControlProtocolError`
    ///   (`.internalError`) for an empty or oversize payload.
    public func send(_ payload: [UInt8]) async throws {
        try link.deliver(ByteBuffer(bytes: try OutboundFrame.bytes(carrying: payload)), from: side)
    }

    /// Hands raw bytes to the peer's stream as they are, for tests that need malformed frames.
    /// - Parameter bytes: Stream bytes, not necessarily whole or valid frames.
    /// - Throws: `ControlTransportError.closed` once the connection is closed.
    public func sendRaw(_ bytes: [UInt8]) throws(ControlTransportError) {
        try link.deliver(ByteBuffer(bytes: bytes), from: side)
    }

    /// Closes both ends: the peer receives what was sent before, then the end of `inbound`, and its `closed()`
    /// returns `.peerApplication(code:reason: "")`; this end's returns `.local(code:)`. Idempotent: only the
    /// first close (from either end) counts.
    /// - Parameter code: The application error code.
    public func close(code: UInt64) async {
        link.close(from: side, code: code)
    }

    /// Waits until either end has closed.
    /// - Returns: Why the connection ended, as seen from this end.
    public func closed() async -> ConnectionCloseReason {
        await link.closed(side: side)
    }
}

/// The state two linked in-memory ends share: both inbound queues and how the connection ended.
final class InMemoryLink: Sendable {
    enum Side: Sendable, Hashable {
        case client
        case server

        var other: Side { self == .client ? .server : .client }
    }

    private struct State: ~Copyable {
        /// Which end closed first, and with what code.
        var ended: (by: Side, code: UInt64)?
        var clientWaiters: [CheckedContinuation<ConnectionCloseReason, Never>] = []
        var serverWaiters: [CheckedContinuation<ConnectionCloseReason, Never>] = []
    }

    private let clientInbound = InboundFrameQueue()
    private let serverInbound = InboundFrameQueue()
    private let state = Mutex(State())

    func queue(of side: Side) -> InboundFrameQueue {
        side == .client ? clientInbound : serverInbound
    }

    /// Appends stream bytes to the other end's inbound queue, unless the connection is closed.
    ///
    /// The append happens under the lock so that it cannot overtake a concurrent close: bytes are either
    /// delivered before the end of the stream or refused with `.closed`.
    func deliver(_ bytes: ByteBuffer, from side: Side) throws(ControlTransportError) {
        let refusal: ConnectionCloseReason? = state.withLock { state in
            if let ended = state.ended { return Self.reason(for: side, ended: ended) }
            queue(of: side.other).append(bytes)
            return nil
        }
        if let refusal { throw .closed(refusal) }
    }

    func close(from side: Side, code: UInt64) {
        let waiters: [(CheckedContinuation<ConnectionCloseReason, Never>, ConnectionCloseReason)]? =
            state.withLock { state in
                guard state.ended == nil else { return nil }
                let ended = (by: side, code: code)
                state.ended = ended
                let client = state.clientWaiters.map { ($0, Self.reason(for: .client, ended: ended)) }
                let server = state.serverWaiters.map { ($0, Self.reason(for: .server, ended: ended)) }
                state.clientWaiters = []
                state.serverWaiters = []
                return client + server
            }
        guard let waiters else { return }
        // Both directions end; frames already appended are still taken before the end is seen.
        clientInbound.finish()
        serverInbound.finish()
        for (continuation, reason) in waiters { continuation.resume(returning: reason) }
    }

    func closed(side: Side) async -> ConnectionCloseReason {
        await withCheckedContinuation { (continuation: CheckedContinuation<ConnectionCloseReason, Never>) in
            let reason: ConnectionCloseReason? = state.withLock { state in
                if let ended = state.ended { return Self.reason(for: side, ended: ended) }
                switch side {
                case .client: state.clientWaiters.append(continuation)
                case .server: state.serverWaiters.append(continuation)
                }
                return nil
            }
            if let reason { continuation.resume(returning: reason) }
        }
    }

    private static func reason(for side: Side, ended: (by: Side, code: UInt64)) -> ConnectionCloseReason {
        ended.by == side ? .local(code: ended.code) : .peerApplication(code: ended.code, reason: "")
    }
}

/// A set of in-memory endpoints that can reach each other by port, standing in for a LAN.
public final class InMemoryNetwork: Sendable {
    private struct State: ~Copyable {
        var listeners: [Int: InMemoryListener] = [:]
        var nextEphemeralPort = 49_152
    }

    private let state = Mutex(State())

    public init() {}

    /// Starts a listener (a monitor) on `port`.
    ///
    /// Port 0 picks a free port (see `InMemoryListener.port`). Asking for a port another running listener holds
    /// is a mistake in the test and stops the program.
    /// - Parameters:
    ///   - port: The port, or 0 for any free port.
    ///   - identity: The certificate the listener presents to every client.
    /// - Returns: The running listener.
    public func listen(port: Int, identity: PeerCertificate) -> InMemoryListener {
        state.withLock { state in
            var bound = port
            if bound == 0 {
                while state.listeners[state.nextEphemeralPort].map({ !$0.isShutDown }) ?? false {
                    state.nextEphemeralPort += 1
                }
                bound = state.nextEphemeralPort
                state.nextEphemeralPort += 1
            }
            if let existing = state.listeners[bound] {
                precondition(existing.isShutDown, "in-memory port \(bound) already has a listener")
            }
            let listener = InMemoryListener(port: bound, identity: identity)
            state.listeners[bound] = listener
            return listener
        }
    }

    /// A client endpoint (a listener app) presenting `identity`.
    /// - Parameter identity: The client certificate it presents.
    /// - Returns: A connector on this network.
    public func connector(identity: PeerCertificate) -> InMemoryConnector {
        InMemoryConnector(network: self, identity: identity)
    }

    func listener(on port: Int) -> InMemoryListener? {
        state.withLock { state in state.listeners[port].flatMap { $0.isShutDown ? nil : $0 } }
    }
}

/// The server endpoint of an `InMemoryNetwork`.
public final class InMemoryListener: ControlListener {
    private struct State: ~Copyable {
        var isShutDown = false
        var accepted: [InMemoryControlConnection] = []
    }

    public let port: Int
    public let connections: AsyncStream<any ControlConnection>
    /// The certificate presented to clients.
    public let identity: PeerCertificate

    private let continuation: AsyncStream<any ControlConnection>.Continuation
    private let state = Mutex(State())

    init(port: Int, identity: PeerCertificate) {
        self.port = port
        self.identity = identity
        (connections, continuation) = AsyncStream.makeStream(of: (any ControlConnection).self)
    }

    var isShutDown: Bool { state.withLock { $0.isShutDown } }

    /// Closes every connection it accepted with code 0, finishes `connections`, and frees the port.
    public func shutdown() async {
        let accepted: [InMemoryControlConnection]? = state.withLock { state in
            guard !state.isShutDown else { return nil }
            state.isShutDown = true
            defer { state.accepted = [] }
            return state.accepted
        }
        guard let accepted else { return }
        continuation.finish()
        for connection in accepted { await connection.close(code: 0) }
    }

    /// Takes the server end of a new connection; false if the listener has shut down meanwhile.
    func accept(_ connection: InMemoryControlConnection) -> Bool {
        state.withLock { state in
            guard !state.isShutDown else { return false }
            state.accepted.append(connection)
            // Yielding under the lock keeps the order of `connections` the order of acceptance, and no
            // connection can be yielded after `shutdown` finished the stream.
            continuation.yield(connection)
            return true
        }
    }
}

/// The client endpoint of an `InMemoryNetwork`.
public final class InMemoryConnector: ControlConnector {
    /// The certificate presented to listeners.
    public let identity: PeerCertificate
    private let network: InMemoryNetwork

    init(network: InMemoryNetwork, identity: PeerCertificate) {
        self.network = network
        self.identity = identity
    }

    /// Connects to the listener on `port`, checking its certificate against the pin before the listener sees
    /// anything.
    /// - Parameters:
    ///   - host: Shown as the connection's address; every host reaches the same network.
    ///   - port: The listener's port.
    ///   - pinnedFingerprint: The fingerprint the listener's certificate must have.
    /// - Returns: The client end; the server end is yielded on the listener's `connections`.
    /// - Throws: `ControlTransportError.handshakeFailed("connection refused")` if nothing listens on `port`;
    ///   `.fingerprintMismatch` if the listener's certificate is not the pinned one.
    public func connect(
        host: String,
        port: Int,
        pinnedFingerprint: CertificateFingerprint
    ) async throws -> any ControlConnection {
        try connectInMemory(host: host, port: port, pinnedFingerprint: pinnedFingerprint)
    }

    /// `connect(host:port:pinnedFingerprint:)` returning the concrete end, for tests that need `sendRaw`.
    /// - Throws: `ControlTransportError`, as `connect(host:port:pinnedFingerprint:)`.
    public func connectInMemory(
        host: String,
        port: Int,
        pinnedFingerprint: CertificateFingerprint
    ) throws(ControlTransportError) -> InMemoryControlConnection {
        guard let listener = network.listener(on: port) else {
            throw .handshakeFailed("connection refused")
        }
        guard listener.identity.fingerprint == pinnedFingerprint else {
            throw .fingerprintMismatch(expected: pinnedFingerprint, actual: listener.identity.fingerprint)
        }
        let ends = InMemoryControlTransport.pair(
            client: identity,
            server: listener.identity,
            clientAddress: "in-memory-client:\(port)",
            serverAddress: "\(host):\(port)"
        )
        guard listener.accept(ends.server) else {
            throw .handshakeFailed("connection refused")
        }
        return ends.client
    }
}

extension PeerCertificate {
    /// The certificate a device presents in the handshake, as its peer would see it.
    /// - Parameter identity: The device's identity.
    public init(identity: DeviceIdentity) {
        self.init(
            fingerprint: identity.fingerprint,
            publicKeySPKI: identity.publicKeySPKI,
            certificateDER: identity.certificateDER
        )
    }
}
