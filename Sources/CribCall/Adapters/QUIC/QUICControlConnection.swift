import ControlTransport
import NIOCore

/// The public, `Sendable` face of a QUIC connection: every operation hops to the connection's event loop.
final class QUICControlConnection: ControlConnection {
    let peer: PeerCertificate
    let remoteAddress: String
    let inbound: ControlFrameSequence
    private let core: NIOLoopBound<QUICConnectionCore>
    private let closedFuture: EventLoopFuture<ConnectionCloseReason>

    /// Wraps an established connection. Call on its event loop.
    init(_ connection: QUICConnectionCore, peer: PeerCertificate) {
        self.peer = peer
        self.remoteAddress = Self.text(of: connection.remote.address)
        self.inbound = ControlFrameSequence(connection.inbound)
        self.core = NIOLoopBound(connection, eventLoop: connection.eventLoop)
        self.closedFuture = connection.closedPromise.futureResult
    }

    /// `address` as ControlConnection promises it: `HOST:PORT`, `[HOST]:PORT` for IPv6, and an IPv4 address mapped
    /// into IPv6 (a dual-stack socket's view of an IPv4 peer) as the IPv4 address it is, so that one device has one
    /// address (the PIN pairing's per-address limits are keyed on it).
    static func text(of address: SocketAddress) -> String {
        guard var host = address.ipAddress, let port = address.port else { return "\(address)" }
        if host.lowercased().hasPrefix("::ffff:"), host.dropFirst(7).contains("."), !host.dropFirst(7).contains(":") {
            host = String(host.dropFirst(7))
        }
        return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    func send(_ payload: [UInt8]) async throws {
        let frame = try OutboundFrame.bytes(carrying: payload)
        let core = self.core
        try await core.eventLoop.flatSubmit { core.value.enqueue(frame: frame) }.get()
    }

    func close(code: UInt64) async {
        let core = self.core
        _ = try? await core.eventLoop.flatSubmit { core.value.close(code: code) }.get()
    }

    func markTrusted() {
        let core = self.core
        core.eventLoop.execute { core.value.endpoint?.trusted(core.value) }
    }

    func closed() async -> ConnectionCloseReason {
        (try? await closedFuture.get()) ?? .shutdown
    }
}

extension QUICControlConnection {
    /// Closes this connection's socket the way NIO does after a fatal send error, without closing the connection:
    /// the endpoint must reopen it. For tests.
    func closeSocketUnderneath() async {
        let core = self.core
        _ = try? await core.eventLoop.flatSubmit { () -> EventLoopFuture<Void> in
            guard let endpoint = core.value.endpoint as? any DatagramChannelEndpoint else {
                return core.eventLoop.makeSucceededVoidFuture()
            }
            return endpoint.channel.close()
        }.get()
    }
}
