import CNGTCP2
import ControlTransport
import Logging
import NIOCore

/// The monitor's side of the UDP socket: routes datagrams to connections by destination connection ID and
/// accepts new connections from Initial packets. Confined to the socket's event loop.
///
/// Admission (``QUICAdmission``): connections are *untrusted* until the service marks them trusted. Under load
/// (``QUICAdmission/retryThreshold`` untrusted) a new client must first prove its address with a Retry; one
/// address may hold only so many untrusted connections; at the limit for all, the oldest untrusted one is closed
/// for the newcomer. Trusted connections are never closed for strangers, and ``QUICConfiguration/maxConnections``
/// leaves them the rest.
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
    /// Connections whose peer is not trusted (yet), with their address and when they arrived (oldest first out).
    private var untrusted: [ObjectIdentifier: (connection: QUICConnectionCore, address: String, since: UInt64)] = [:]
    private(set) var admissionStatistics = QUICAdmissionStatistics()
    /// Keys Retry tokens; new each run (a token lives seconds).
    private let retrySecret: [UInt8] = {
        var secret = [UInt8](repeating: 0, count: 32)
        _ = gnutls_rnd(GNUTLS_RND_KEY, &secret, secret.count)
        return secret
    }()

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
            guard !shuttingDown else { return }
            var header = ngtcp2_pkt_hd()
            guard ngtcp2_accept(&header, base, packet.count) == 0 else { return }
            admit(header, packet: packet, dcid: dcid, from: envelope.remoteAddress)
        }
    }

    /// A client's first Initial: validate its address if need be, make room, and create the connection.
    private func admit(
        _ header: ngtcp2_pkt_hd, packet: UnsafeRawBufferPointer, dcid: [UInt8], from address: SocketAddress
    ) {
        let admission = configuration.admission
        guard let remote = try? SocketAddressStorage(address) else { return }
        let host = address.ipAddress ?? "\(address)"
        var retry: (originalDCID: ngtcp2_cid, retrySCID: ngtcp2_cid)?
        if header.type == UInt8(NGTCP2_PKT_INITIAL.rawValue), header.token.len > 0,
            header.token.base[0] == UInt8(NGTCP2_CRYPTO_TOKEN_MAGIC_RETRY)
        {
            guard let original = verifyRetryToken(header, remote: remote) else {
                admissionStatistics.invalidTokens += 1
                refuseInvalidToken(header, to: address)
                return
            }
            retry = (original, header.dcid)
        } else if untrusted.count >= admission.retryThreshold {
            admissionStatistics.retries += 1
            sendRetry(header, remote: remote, to: address)
            return
        }
        // Handshakes are short (and, under load, address-validated); what an address can hold is the connections it
        // completed with a certificate the monitor does not trust.
        let established = untrusted.values.filter { $0.connection.peer != nil }
        guard established.count(where: { $0.address == host }) < admission.maxUntrustedPerAddress else {
            admissionStatistics.droppedForAddress += 1
            configuration.logger.debug(
                "dropped a new connection: its address holds its unpaired connections already",
                metadata: ["address": "\(host)", "limit": "\(admission.maxUntrustedPerAddress)"])
            return
        }
        if untrusted.count >= admission.maxUntrusted,
            let oldest = established.min(by: { $0.since < $1.since })
                ?? untrusted.values.min(by: { $0.since < $1.since })
        {
            untrusted[ObjectIdentifier(oldest.connection)] = nil
            admissionStatistics.evicted += 1
            configuration.logger.debug(
                "closed the oldest unpaired connection to make room", metadata: ["address": "\(oldest.address)"])
            _ = oldest.connection.close(code: Self.evictedCode)
        }
        guard live.count < configuration.maxConnections else {
            configuration.logger.debug(
                "dropped a new connection: the monitor holds its most", metadata: ["address": "\(host)"])
            return
        }
        do {
            let connection = try QUICConnectionCore.accept(
                header: header, endpoint: self, eventLoop: channel.eventLoop, configuration: configuration,
                credentials: credentials, local: try localAddress(), remote: remote, retry: retry)
            live[ObjectIdentifier(connection)] = connection
            untrusted[ObjectIdentifier(connection)] = (connection, host, quicTimestamp())
            routes[dcid] = connection
            for cid in connection.issuedCIDs { routes[cid] = connection }
            connection.receive(packet, from: address)
        } catch {
            // A connection that cannot be created is dropped; the client times out or retries.
            configuration.logger.debug(
                "dropped a new connection that could not be created: \(error)", metadata: ["address": "\(host)"])
        }
    }

    /// The application close code of an untrusted connection closed to make room (UNAUTHORIZED, PROTOCOL.md §4).
    static let evictedCode: UInt64 = 2

    /// Answers an Initial with a Retry carrying a token bound to the client's address and its original DCID.
    private func sendRetry(_ header: ngtcp2_pkt_hd, remote: SocketAddressStorage, to address: SocketAddress) {
        var header = header
        var retrySCID = ngtcp2_cid()
        var random = [UInt8](repeating: 0, count: 18)
        _ = gnutls_rnd(GNUTLS_RND_NONCE, &random, random.count)
        ngtcp2_cid_init(&retrySCID, random, random.count)
        var token = [UInt8](repeating: 0, count: 128)  // NGTCP2_CRYPTO_MAX_RETRY_TOKENLEN is 78
        let tokenLength = ngtcp2_crypto_generate_retry_token(
            &token, retrySecret, retrySecret.count, header.version, remote.sockaddr, ngtcp2_socklen(remote.length),
            &retrySCID, &header.dcid, quicTimestamp())
        guard tokenLength > 0 else { return }
        var packet = [UInt8](repeating: 0, count: 256)
        let written = ngtcp2_crypto_write_retry(
            &packet, packet.count, header.version, &header.scid, &retrySCID, &header.dcid, token, Int(tokenLength))
        guard written > 0 else { return }
        packet.withUnsafeBytes { send(UnsafeRawBufferPointer(rebasing: $0[0..<written]), to: address) }
        flush()
    }

    /// The client's original DCID if its Retry token is ours, recent and for this address; nil otherwise.
    private func verifyRetryToken(_ header: ngtcp2_pkt_hd, remote: SocketAddressStorage) -> ngtcp2_cid? {
        var header = header
        var original = ngtcp2_cid()
        let status = ngtcp2_crypto_verify_retry_token(
            &original, header.token.base, header.token.len, retrySecret, retrySecret.count, header.version,
            remote.sockaddr, ngtcp2_socklen(remote.length), &header.dcid,
            configuration.admission.retryTokenLifetime.nanoseconds, quicTimestamp())
        return status == 0 ? original : nil
    }

    /// RFC 9000 §8.1.2: an invalid Retry token closes the attempt at once with INVALID_TOKEN.
    private func refuseInvalidToken(_ header: ngtcp2_pkt_hd, to address: SocketAddress) {
        var header = header
        var packet = [UInt8](repeating: 0, count: 256)
        let written = ngtcp2_crypto_write_connection_close(
            &packet, packet.count, header.version, &header.scid, &header.dcid, UInt64(NGTCP2_INVALID_TOKEN), nil, 0)
        guard written > 0 else { return }
        packet.withUnsafeBytes { send(UnsafeRawBufferPointer(rebasing: $0[0..<written]), to: address) }
        flush()
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

    func trusted(_ connection: QUICConnectionCore) {
        untrusted[ObjectIdentifier(connection)] = nil
    }

    func finished(_ connection: QUICConnectionCore) {
        live[ObjectIdentifier(connection)] = nil
        untrusted[ObjectIdentifier(connection)] = nil
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
