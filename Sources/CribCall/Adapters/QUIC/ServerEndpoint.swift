import CNGTCP2
import ControlTransport
import NIOCore

/// The monitor's side of the UDP socket: routes datagrams to connections by destination connection ID and
/// accepts new connections from Initial packets. Confined to the socket's event loop.
final class ServerEndpoint: ReopeningDatagramEndpoint {
    var channel: any Channel
    var boundAddress: SocketAddress?
    private let configuration: QUICConfiguration
    private let credentials: TLSCredentials
    private let accepted: AsyncStream<any ControlConnection>.Continuation
    private var routes: [[UInt8]: QUICConnectionCore] = [:]
    private var live: [ObjectIdentifier: QUICConnectionCore] = [:]
    private var local: SocketAddressStorage?
    private var shuttingDown = false
    private var allFinished: [EventLoopPromise<Void>] = []

    init(
        channel: any Channel,
        configuration: QUICConfiguration,
        credentials: TLSCredentials,
        accepted: AsyncStream<any ControlConnection>.Continuation
    ) {
        self.channel = channel
        self.configuration = configuration
        self.credentials = credentials
        self.accepted = accepted
    }

    func receive(_ envelope: AddressedEnvelope<ByteBuffer>) {
        envelope.data.withUnsafeReadableBytes { packet in
            guard let base = packet.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
            var identifiers = ngtcp2_version_cid()
            let status = ngtcp2_pkt_decode_version_cid(&identifiers, base, packet.count, 18)
            if status == NGTCP2_ERR_VERSION_NEGOTIATION {
                sendVersionNegotiation(identifiers, to: envelope.remoteAddress)
                return
            }
            guard status == 0, let dcidPointer = identifiers.dcid else { return }
            let dcid = Array(UnsafeBufferPointer(start: dcidPointer, count: identifiers.dcidlen))
            if let connection = routes[dcid] {
                connection.receive(packet, from: envelope.remoteAddress)
                return
            }
            // A short-header packet for a connection we do not know (e.g. from before a restart): tell the peer
            // at once with a stateless reset instead of letting it wait for its idle timeout.
            if base[0] & 0x80 == 0 {
                sendStatelessReset(for: dcid, triggeredBy: packet.count, to: envelope.remoteAddress)
                return
            }
            guard !shuttingDown, live.count < configuration.maxConnections else { return }
            var header = ngtcp2_pkt_hd()
            guard ngtcp2_accept(&header, base, packet.count) == 0 else { return }
            do {
                let local = try localAddress()
                let remote = try SocketAddressStorage(envelope.remoteAddress)
                let connection = try QUICConnectionCore.accept(
                    header: header, endpoint: self, eventLoop: channel.eventLoop, configuration: configuration,
                    credentials: credentials, local: local, remote: remote)
                live[ObjectIdentifier(connection)] = connection
                routes[dcid] = connection
                for cid in connection.issuedCIDs { routes[cid] = connection }
                connection.receive(packet, from: envelope.remoteAddress)
            } catch {
                // A connection that cannot be created is dropped; the client times out or retries.
            }
        }
    }

    private func localAddress() throws -> SocketAddressStorage {
        if let local { return local }
        guard let address = channel.localAddress else {
            throw QUICError.ngtcp2("the socket has no local address", NGTCP2_ERR_INVALID_STATE)
        }
        let storage = try SocketAddressStorage(address)
        local = storage
        return storage
    }

    private var resetBudget = (window: NIODeadline.now(), sent: 0)

    /// RFC 9000 §10.3: smaller than the packet that triggered it (so two endpoints cannot loop), at least 21
    /// bytes, and rate-limited (at most 100 a second) so it cannot be used for amplification.
    private func sendStatelessReset(for dcid: [UInt8], triggeredBy size: Int, to address: SocketAddress) {
        let minimum = 1 + Int(NGTCP2_MIN_STATELESS_RESET_RANDLEN) + Int(NGTCP2_STATELESS_RESET_TOKENLEN)
        guard size - 1 >= minimum, dcid.count <= Int(NGTCP2_MAX_CIDLEN) else { return }
        let now = NIODeadline.now()
        if now - resetBudget.window > .seconds(1) { resetBudget = (now, 0) }
        guard resetBudget.sent < 100 else { return }
        resetBudget.sent += 1
        var cid = ngtcp2_cid()
        ngtcp2_cid_init(&cid, dcid, dcid.count)
        var token = [UInt8](repeating: 0, count: Int(NGTCP2_STATELESS_RESET_TOKENLEN))
        let status = token.withUnsafeMutableBytes {
            QUICConnectionCore.resetToken(into: $0, secret: credentials.statelessResetSecret, cid: &cid)
        }
        guard status == 0 else { return }
        let length = min(size - 1, 43)
        var random = [UInt8](repeating: 0, count: length - 1 - token.count)
        _ = gnutls_rnd(GNUTLS_RND_NONCE, &random, random.count)
        var packet = [UInt8](repeating: 0, count: length)
        let written = ngtcp2_pkt_write_stateless_reset(&packet, packet.count, &token, &random, random.count)
        guard written > 0 else { return }
        packet.withUnsafeBytes { send(UnsafeRawBufferPointer(rebasing: $0[0..<written]), to: address) }
        flush()
    }

    private func sendVersionNegotiation(_ identifiers: ngtcp2_version_cid, to address: SocketAddress) {
        var buffer = [UInt8](repeating: 0, count: 256)
        var versions: [UInt32] = [cribcall_ngtcp2_proto_ver_v1]
        var unused: UInt8 = 0
        _ = gnutls_rnd(GNUTLS_RND_NONCE, &unused, 1)
        let written = ngtcp2_pkt_write_version_negotiation(
            &buffer, buffer.count, unused, identifiers.scid, identifiers.scidlen, identifiers.dcid,
            identifiers.dcidlen, &versions, versions.count)
        guard written > 0 else { return }
        buffer.withUnsafeBytes { send(UnsafeRawBufferPointer(rebasing: $0[0..<written]), to: address) }
        flush()
    }

    // MARK: QUICEndpoint

    func register(cid: [UInt8], for connection: QUICConnectionCore) {
        routes[cid] = connection
    }

    func unregister(cid: [UInt8]) {
        routes[cid] = nil
    }

    func established(_ connection: QUICConnectionCore) {
        guard let peer = connection.peer else { return }
        accepted.yield(QUICControlConnection(connection, peer: peer))
    }

    func finished(_ connection: QUICConnectionCore) {
        live[ObjectIdentifier(connection)] = nil
        routes = routes.filter { $0.value !== connection }
        if shuttingDown, live.isEmpty {
            let waiting = allFinished
            allFinished.removeAll()
            for promise in waiting { promise.succeed() }
        }
    }

    var wantsSocket: Bool { !shuttingDown }

    func socketClosed() {
        // Closed under us (e.g. the network went down): keep the connections and reopen the socket.
        if wantsSocket {
            reopenSocket()
            return
        }
        for connection in live.values { connection.finish(.shutdown) }
        accepted.finish()
    }

    /// Closes every connection with code 0 and completes when all have finished their closing period.
    func shutdown() -> EventLoopFuture<Void> {
        shuttingDown = true
        accepted.finish()
        if live.isEmpty { return channel.eventLoop.makeSucceededVoidFuture() }
        let promise = channel.eventLoop.makePromise(of: Void.self)
        allFinished.append(promise)
        for connection in live.values {
            _ = connection.close(code: 0)
        }
        return promise.futureResult
    }
}
