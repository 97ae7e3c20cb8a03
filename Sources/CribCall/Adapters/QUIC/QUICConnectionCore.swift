import CNGTCP2
import ControlTransport
import Crypto
import DeviceIdentity
import NIOCore
import SwiftASN1
import X509

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Everything of one QUIC connection: the ngtcp2 connection, its GnuTLS session, the control stream's send
/// buffer and receive queue, the timer and the close logic.
///
/// Confined to its endpoint's event loop: every method runs there, and so do all ngtcp2 and GnuTLS callbacks,
/// which find this object through `Unmanaged` user data (valid because this object owns the C objects and frees
/// them in `deinit`).
final class QUICConnectionCore {
    enum Role { case server, client }

    typealias Phase = ConnectionLifecycle.Phase

    let role: Role
    let alpn: String
    let eventLoop: any EventLoop
    private(set) weak var endpoint: (any QUICEndpoint)?
    private let configuration: QUICConfiguration
    private let credentials: TLSCredentials
    private let pinnedFingerprint: CertificateFingerprint?
    /// Derives the stateless-reset token of each connection ID this side issues (stable across restarts).
    private let resetSecret: [UInt8]

    private var connection: OpaquePointer?
    private var session: gnutls_session_t?
    private let connectionReference: UnsafeMutablePointer<ngtcp2_crypto_conn_ref>
    private let pathStorage: UnsafeMutablePointer<ngtcp2_path_storage>
    private let transmitBuffer: UnsafeMutableRawBufferPointer
    private let local: SocketAddressStorage
    private(set) var remote: SocketAddressStorage

    /// Handshake, graceful close, closing/draining and the single end, as a pure machine (ConnectionLifecycle.swift).
    private var lifecycle = ConnectionLifecycle()
    var phase: Phase { lifecycle.phase }
    /// The source connection IDs this side issued, for the endpoint's routing table.
    private(set) var issuedCIDs: Set<[UInt8]> = []
    /// What the peer's certificate proved, once verified.
    private(set) var peer: PeerCertificate?
    /// The certificate the client's pin check refused.
    private var pinMismatch: CertificateFingerprint?

    private var controlStream: Int64?
    private let sendBuffer = StreamSendBuffer()
    private var sendWaiters: [EventLoopPromise<Void>] = []
    let inbound: InboundFrameQueue
    private var timer: Scheduled<Void>?
    private var closingPacket: [UInt8] = []
    private var closeDeadline: Scheduled<Void>?

    /// Completes when the handshake succeeds (after the peer certificate passed our checks) or fails.
    let handshake: EventLoopPromise<Void>
    /// Completes once, with why the connection ended.
    let closedPromise: EventLoopPromise<ConnectionCloseReason>

    // MARK: creation

    private init(
        role: Role,
        endpoint: any QUICEndpoint,
        eventLoop: any EventLoop,
        configuration: QUICConfiguration,
        credentials: TLSCredentials,
        local: SocketAddressStorage,
        remote: SocketAddressStorage,
        pinnedFingerprint: CertificateFingerprint?
    ) {
        self.role = role
        self.alpn = configuration.alpn
        self.endpoint = endpoint
        self.eventLoop = eventLoop
        self.configuration = configuration
        self.credentials = credentials
        self.local = local
        self.remote = remote
        self.pinnedFingerprint = pinnedFingerprint
        self.resetSecret = credentials.statelessResetSecret
        connectionReference = .allocate(capacity: 1)
        connectionReference.initialize(
            to: ngtcp2_crypto_conn_ref(
                get_conn: { reference in
                    guard let userData = reference?.pointee.user_data else { return nil }
                    return Unmanaged<QUICConnectionCore>.fromOpaque(userData).takeUnretainedValue().connection
                }, user_data: nil))
        pathStorage = .allocate(capacity: 1)
        ngtcp2_path_storage_zero(pathStorage)
        transmitBuffer = .allocate(byteCount: Int(NGTCP2_MAX_UDP_PAYLOAD_SIZE), alignment: 8)
        handshake = eventLoop.makePromise()
        closedPromise = eventLoop.makePromise()
        let weak = WeakConnection()
        inbound = InboundFrameQueue { [eventLoop] count in
            eventLoop.execute { weak.connection?.returnCredit(count) }
        }
        weak.connection = self
        connectionReference.pointee.user_data = Unmanaged.passUnretained(self).toOpaque()
    }

    deinit {
        if let connection { ngtcp2_conn_del(connection) }
        if let session { gnutls_deinit(session) }
        connectionReference.deallocate()
        pathStorage.deallocate()
        transmitBuffer.deallocate()
        timer?.cancel()
    }

    /// A server connection for a client's first Initial packet.
    static func accept(
        header: ngtcp2_pkt_hd,
        endpoint: any QUICEndpoint,
        eventLoop: any EventLoop,
        configuration: QUICConfiguration,
        credentials: TLSCredentials,
        local: SocketAddressStorage,
        remote: SocketAddressStorage,
        retry: (originalDCID: ngtcp2_cid, retrySCID: ngtcp2_cid)? = nil
    ) throws -> QUICConnectionCore {
        let core = QUICConnectionCore(
            role: .server, endpoint: endpoint, eventLoop: eventLoop, configuration: configuration,
            credentials: credentials, local: local, remote: remote, pinnedFingerprint: nil)
        var sourceCID = core.newCID(length: 18)
        var destinationCID = header.scid  // we address the client by the ID it chose
        var settings = core.settings()
        var parameters = core.transportParameters()
        parameters.original_dcid = header.dcid  // the server must echo the client's original DCID
        if let retry {
            // After a Retry: the DCID of the client's very first Initial, and the one the Retry chose (RFC 9000
            // §7.3); the token proves the address, so the anti-amplification limit does not apply.
            parameters.original_dcid = retry.originalDCID
            parameters.retry_scid = retry.retrySCID
            parameters.retry_scid_present = 1
            settings.token = header.token
        }
        parameters.stateless_reset_token_present = 1
        withUnsafeMutableBytes(of: &parameters.stateless_reset_token) { token in
            _ = Self.resetToken(into: token, secret: core.resetSecret, cid: &sourceCID)
        }
        var path = core.path(remote: remote)
        var callbacks = Self.callbacks(server: true)
        let status = cribcall_ngtcp2_conn_server_new(
            &core.connection, &destinationCID, &sourceCID, &path, header.version, &callbacks, &settings,
            &parameters, Unmanaged.passUnretained(core).toOpaque())
        guard status == 0 else { throw QUICError.ngtcp2("cannot create the server connection", status) }
        core.issuedCIDs.insert(Self.bytes(of: sourceCID))
        try core.attachTLS()
        return core
    }

    /// A client connection to `remote`, pinning the server's certificate fingerprint.
    static func connect(
        endpoint: any QUICEndpoint,
        eventLoop: any EventLoop,
        configuration: QUICConfiguration,
        credentials: TLSCredentials,
        local: SocketAddressStorage,
        remote: SocketAddressStorage,
        pinnedFingerprint: CertificateFingerprint
    ) throws -> QUICConnectionCore {
        let core = QUICConnectionCore(
            role: .client, endpoint: endpoint, eventLoop: eventLoop, configuration: configuration,
            credentials: credentials, local: local, remote: remote, pinnedFingerprint: pinnedFingerprint)
        var sourceCID = core.newCID(length: 8)
        var destinationCID = core.newCID(length: 18)
        var settings = core.settings()
        var parameters = core.transportParameters()
        var path = core.path(remote: remote)
        var callbacks = Self.callbacks(server: false)
        let status = cribcall_ngtcp2_conn_client_new(
            &core.connection, &destinationCID, &sourceCID, &path, cribcall_ngtcp2_proto_ver_v1, &callbacks,
            &settings, &parameters, Unmanaged.passUnretained(core).toOpaque())
        guard status == 0 else { throw QUICError.ngtcp2("cannot create the client connection", status) }
        core.issuedCIDs.insert(Self.bytes(of: sourceCID))
        try core.attachTLS()
        return core
    }

    private func attachTLS() throws {
        let session = try TLSSession.make(
            server: role == .server, credentials: credentials, alpn: alpn,
            connectionReference: connectionReference)
        self.session = session
        ngtcp2_conn_set_tls_native_handle(connection, UnsafeMutableRawPointer(session))
    }

    private func settings() -> ngtcp2_settings {
        var settings = ngtcp2_settings()
        cribcall_ngtcp2_settings_default(&settings, configuration.ngtcp2Log ? 1 : 0)
        settings.initial_ts = quicTimestamp()
        settings.initial_rtt = configuration.initialRTT.nanoseconds
        settings.handshake_timeout = configuration.handshakeTimeout.nanoseconds
        settings.max_tx_udp_payload_size = 1452
        return settings
    }

    private func transportParameters() -> ngtcp2_transport_params {
        var parameters = ngtcp2_transport_params()
        cribcall_ngtcp2_transport_params_default(&parameters)
        let window = UInt64(configuration.streamWindow)
        parameters.initial_max_stream_data_bidi_local = window
        parameters.initial_max_stream_data_bidi_remote = window
        parameters.initial_max_stream_data_uni = 0
        parameters.initial_max_data = window
        // The client opens exactly one stream, the control stream; the server opens none.
        parameters.initial_max_streams_bidi = role == .server ? 1 : 0
        parameters.initial_max_streams_uni = 0
        parameters.max_idle_timeout = configuration.idleTimeout.nanoseconds
        parameters.active_connection_id_limit = 4
        parameters.disable_active_migration = 1
        return parameters
    }

    private func path(remote: SocketAddressStorage) -> ngtcp2_path {
        ngtcp2_path(local: local.ngtcp2Address, remote: remote.ngtcp2Address, user_data: nil)
    }

    private func newCID(length: Int) -> ngtcp2_cid {
        var bytes = [UInt8](repeating: 0, count: length)
        _ = gnutls_rnd(GNUTLS_RND_RANDOM, &bytes, length)
        var cid = ngtcp2_cid()
        ngtcp2_cid_init(&cid, bytes, length)
        return cid
    }

    /// The stateless-reset token of `cid`: HKDF of the endpoint's secret and the ID (RFC 9000 §10.3.2).
    static func resetToken(into token: UnsafeMutableRawBufferPointer, secret: [UInt8], cid: UnsafePointer<ngtcp2_cid>)
        -> Int32
    {
        guard let base = token.baseAddress, token.count >= Int(NGTCP2_STATELESS_RESET_TOKENLEN) else { return -1 }
        return ngtcp2_crypto_generate_stateless_reset_token(
            base.assumingMemoryBound(to: UInt8.self), secret, secret.count, cid)
    }

    static func bytes(of cid: ngtcp2_cid) -> [UInt8] {
        withUnsafeBytes(of: cid.data) { Array($0.prefix(cid.datalen)) }
    }

    // MARK: TLS verification (inside the handshake)

    func verifyPeer(session: gnutls_session_t) -> Int32 {
        var count: UInt32 = 0
        guard gnutls_certificate_type_get(session) == GNUTLS_CRT_X509,
            let certificates = gnutls_certificate_get_peers(session, &count), count > 0,
            let data = certificates[0].data
        else {
            return GNUTLS_E_CERTIFICATE_ERROR  // "request" mode also lands here without a certificate
        }
        let der = Array(UnsafeBufferPointer(start: data, count: Int(certificates[0].size)))
        let fingerprint = CertificateFingerprint(certificateDER: der)
        if let pinnedFingerprint, fingerprint != pinnedFingerprint {
            pinMismatch = fingerprint
            return GNUTLS_E_CERTIFICATE_ERROR
        }
        // Both sides use Ed25519 device certificates (PROTOCOL.md §1).
        guard let certificate = try? Certificate(derEncoded: der),
            Curve25519.Signing.PublicKey(certificate.publicKey) != nil
        else {
            return GNUTLS_E_CERTIFICATE_ERROR
        }
        peer = PeerCertificate(
            fingerprint: fingerprint, publicKeySPKI: DeviceIdentity.spki(of: certificate.publicKey),
            certificateDER: der)
        return GNUTLS_E_SUCCESS
    }

    // MARK: packets in

    /// Handles one datagram addressed to this connection.
    func receive(_ packet: UnsafeRawBufferPointer, from address: SocketAddress) {
        switch lifecycle.packetDisposition {
        case .resendClose:
            resendClosingPacket()
            return
        case .drop:
            return
        case .process:
            break
        }
        guard let connection, let base = packet.baseAddress else { return }
        let source: SocketAddressStorage
        if address == remote.address {
            source = remote
        } else if let other = try? SocketAddressStorage(address) {
            source = other
        } else {
            return
        }
        var path = path(remote: source)
        let status = cribcall_ngtcp2_conn_read_pkt(
            connection, &path, base.assumingMemoryBound(to: UInt8.self), packet.count, quicTimestamp())
        switch status {
        case 0:
            writeOut()
        case NGTCP2_ERR_DRAINING:
            enterDraining()
        case NGTCP2_ERR_CLOSING:
            break
        case NGTCP2_ERR_DROP_CONN:
            finish(.transport(code: 0, reason: "dropped"))
        case NGTCP2_ERR_CRYPTO:
            var error = ngtcp2_connection_close_error()
            ngtcp2_connection_close_error_set_transport_error_tls_alert(
                &error, ngtcp2_conn_get_tls_alert(connection), nil, 0)
            closeImmediately(error, reason: .transport(code: error.error_code, reason: "TLS handshake failed"))
        default:
            var error = ngtcp2_connection_close_error()
            ngtcp2_connection_close_error_set_transport_error_liberr(&error, status, nil, 0)
            closeImmediately(
                error, reason: .transport(code: error.error_code, reason: String(cString: ngtcp2_strerror(status))))
        }
    }

    // MARK: packets out

    /// Writes everything ngtcp2 wants to send now: handshake, acknowledgements, retransmissions, stream data.
    func writeOut() {
        guard let connection, lifecycle.isOpen else { return }
        let now = quicTimestamp()
        var streamBlocked = false
        while true {
            var vector = ngtcp2_vec()
            var hasData = false
            if !streamBlocked, let stream = controlStream, let next = sendBuffer.unsentVector() {
                vector = next
                hasData = stream >= 0
            }
            var accepted: ngtcp2_ssize = -1
            let written = withUnsafePointer(to: &vector) { vectorPointer in
                cribcall_ngtcp2_conn_writev_stream(
                    connection, &pathStorage.pointee.path,
                    transmitBuffer.baseAddress?.assumingMemoryBound(to: UInt8.self), transmitBuffer.count,
                    &accepted, UInt32(NGTCP2_WRITE_STREAM_FLAG_NONE),
                    hasData ? (controlStream ?? -1) : -1, hasData ? vectorPointer : nil, hasData ? 1 : 0, now)
            }
            if written < 0 {
                let status = Int32(written)
                if hasData,
                    status == NGTCP2_ERR_STREAM_DATA_BLOCKED || status == NGTCP2_ERR_STREAM_SHUT_WR
                        || status == NGTCP2_ERR_STREAM_NOT_FOUND
                {
                    streamBlocked = true
                    continue
                }
                var error = ngtcp2_connection_close_error()
                ngtcp2_connection_close_error_set_transport_error_liberr(&error, status, nil, 0)
                closeImmediately(
                    error, reason: .transport(code: error.error_code, reason: String(cString: ngtcp2_strerror(status))))
                return
            }
            if accepted > 0 { sendBuffer.markSent(accepted) }
            if written == 0 { break }
            endpoint?.send(UnsafeRawBufferPointer(rebasing: transmitBuffer[0..<Int(written)]), to: remote.address)
        }
        endpoint?.flush()
        ngtcp2_conn_update_pkt_tx_time(connection, now)
        scheduleTimer()
    }

    private func scheduleTimer() {
        timer?.cancel()
        guard let connection, lifecycle.isOpen else { return }
        let expiry = ngtcp2_conn_get_expiry(connection)
        guard expiry != UInt64.max else { return }
        timer = eventLoop.assumeIsolated().scheduleTask(deadline: .uptimeNanoseconds(expiry)) { [weak self] in
            guard let self else { return }
            self.handleExpiry()
        }
    }

    private func handleExpiry() {
        guard let connection, lifecycle.isOpen else { return }
        let status = ngtcp2_conn_handle_expiry(connection, quicTimestamp())
        switch status {
        case 0:
            writeOut()
        case NGTCP2_ERR_IDLE_CLOSE:
            finish(phase == .handshaking ? .transport(code: 0, reason: "handshake timed out") : .idleTimeout)
        default:
            var error = ngtcp2_connection_close_error()
            ngtcp2_connection_close_error_set_transport_error_liberr(&error, status, nil, 0)
            let timedOut = status == NGTCP2_ERR_HANDSHAKE_TIMEOUT
            closeImmediately(
                error,
                reason: .transport(
                    code: error.error_code,
                    reason: timedOut ? "handshake timed out" : String(cString: ngtcp2_strerror(status))))
        }
    }

    // MARK: the control stream

    /// Queues a frame on the control stream. The future completes when the sender may go on (backpressure).
    func enqueue(frame: [UInt8]) -> EventLoopFuture<Void> {
        guard lifecycle.acceptsFrames else {
            return eventLoop.makeFailedFuture(ControlTransportError.closed(closedReason ?? .local(code: 0)))
        }
        sendBuffer.append(frame)
        scheduleWrite()
        guard sendBuffer.unacknowledged > configuration.sendHighWatermark else {
            return eventLoop.makeSucceededVoidFuture()
        }
        let waiter = eventLoop.makePromise(of: Void.self)
        sendWaiters.append(waiter)
        return waiter.futureResult
    }

    /// The consumer took `count` bytes of frames: give the peer that much more room.
    func returnCredit(_ count: Int) {
        guard let connection, let stream = controlStream, phase == .established else { return }
        _ = ngtcp2_conn_extend_max_stream_offset(connection, stream, UInt64(count))
        ngtcp2_conn_extend_max_offset(connection, UInt64(count))
        scheduleWrite()
    }

    private var writeScheduled = false

    /// Writes once after the tasks already queued on the event loop, so frames sent in a burst share packets.
    private func scheduleWrite() {
        guard !writeScheduled else { return }
        writeScheduled = true
        eventLoop.assumeIsolated().execute { [weak self] in
            guard let self else { return }
            self.writeScheduled = false
            self.writeOut()
        }
    }

    private func acknowledged(stream: Int64, upTo offset: UInt64) {
        guard stream == controlStream else { return }
        sendBuffer.acknowledge(upTo: offset)
        if sendBuffer.unacknowledged <= configuration.sendLowWatermark {
            let waiters = sendWaiters
            sendWaiters.removeAll()
            for waiter in waiters { waiter.succeed() }
        }
        perform(lifecycle.acknowledged(unacknowledged: sendBuffer.unacknowledged))
    }

    private func received(stream: Int64, data: UnsafeRawBufferPointer, fin: Bool) {
        guard let connection else { return }
        if role == .server, controlStream == nil, stream == 0 {
            controlStream = 0
        }
        guard stream == controlStream else {
            // Not the control stream: give the credit back and ignore it.
            _ = ngtcp2_conn_extend_max_stream_offset(connection, stream, UInt64(data.count))
            ngtcp2_conn_extend_max_offset(connection, UInt64(data.count))
            return
        }
        if !data.isEmpty {
            inbound.append(ByteBuffer(bytes: data))
        }
        if fin {
            inbound.finish()
        }
    }

    private func handshakeCompleted() -> Int32 {
        // GnuTLS calls the verify function only when a certificate arrives; never proceed without one.
        guard let actions = lifecycle.handshakeCompleted(peerVerified: peer != nil) else {
            return NGTCP2_ERR_CALLBACK_FAILURE
        }
        if role == .client {
            var stream: Int64 = -1
            guard ngtcp2_conn_open_bidi_stream(connection, &stream, nil) == 0 else {
                return NGTCP2_ERR_CALLBACK_FAILURE
            }
            controlStream = stream
        }
        perform(actions)
        return 0
    }

    // MARK: closing

    var closedReason: ConnectionCloseReason? { lifecycle.closedReason }

    /// Closes with an application error code after the sent frames are acknowledged (or a short timeout).
    func close(code: UInt64) -> EventLoopFuture<ConnectionCloseReason> {
        perform(
            lifecycle.closeRequested(code: code, unacknowledged: sendBuffer.unacknowledged)
        )
        return closedPromise.futureResult
    }

    /// Sends CONNECTION_CLOSE now and enters the closing period.
    private func closeImmediately(_ error: ngtcp2_connection_close_error, reason: ConnectionCloseReason) {
        guard connection != nil else { return }
        perform(lifecycle.closeImmediately(reason), transportError: error)
    }

    /// Performs the lifecycle's actions in order; `transportError` is what a `.sendConnectionClose` for a reason
    /// other than a local application close writes.
    private func perform(
        _ actions: [ConnectionLifecycle.Action],
        transportError: ngtcp2_connection_close_error? = nil
    ) {
        for action in actions {
            switch action {
            case .succeedHandshake:
                handshake.succeed()
            case .announceEstablished:
                endpoint?.established(self)
            case .writeOut:
                writeOut()
            case .scheduleCloseDeadline:
                closeDeadline = eventLoop.assumeIsolated().scheduleTask(
                    in: .nanoseconds(Int64(configuration.closeFlushTimeout.nanoseconds))
                ) { [weak self] in
                    guard let self else { return }
                    self.closeDeadline = nil
                    self.perform(self.lifecycle.closeDeadlinePassed())
                }
            case .cancelCloseDeadline:
                closeDeadline?.cancel()
                closeDeadline = nil
            case .sendConnectionClose(let reason):
                var error = ngtcp2_connection_close_error()
                if case .local(let code) = reason {
                    ngtcp2_connection_close_error_set_application_error(&error, code, nil, 0)
                } else if let transportError {
                    error = transportError
                }
                sendConnectionClose(error)
            case .end(let reason, let failsHandshake):
                end(reason, failsHandshake: failsHandshake)
            case .linger:
                lingerThenFinish()
            case .forget:
                timer?.cancel()
                timer = nil
                endpoint?.finished(self)
            }
        }
    }

    /// Writes CONNECTION_CLOSE and sends it (again for each packet that arrives while closing).
    private func sendConnectionClose(_ error: ngtcp2_connection_close_error) {
        guard let connection else { return }
        if ngtcp2_conn_is_in_closing_period(connection) == 0, ngtcp2_conn_is_in_draining_period(connection) == 0 {
            var error = error
            let written = cribcall_ngtcp2_conn_write_connection_close(
                connection, &pathStorage.pointee.path,
                transmitBuffer.baseAddress?.assumingMemoryBound(to: UInt8.self), transmitBuffer.count, &error,
                quicTimestamp())
            if written > 0 {
                closingPacket = Array(UnsafeRawBufferPointer(rebasing: transmitBuffer[0..<Int(written)]))
                resendClosingPacket()
            }
        }
    }

    private func resendClosingPacket() {
        guard !closingPacket.isEmpty else { return }
        closingPacket.withUnsafeBytes { endpoint?.send($0, to: remote.address) }
        endpoint?.flush()
    }

    private func enterDraining() {
        guard let connection else { return }
        var error = ngtcp2_connection_close_error()
        ngtcp2_conn_get_connection_close_error(connection, &error)
        let reasonText =
            error.reason.map { String(decoding: UnsafeBufferPointer(start: $0, count: error.reasonlen), as: UTF8.self) }
            ?? ""
        let reason: ConnectionCloseReason =
            error.type == NGTCP2_CONNECTION_CLOSE_ERROR_CODE_TYPE_APPLICATION
            ? .peerApplication(code: error.error_code, reason: reasonText)
            : .transport(code: error.error_code, reason: reasonText)
        perform(lifecycle.peerClosed(reason))
    }

    /// Stays reachable for three PTOs (RFC 9000 §10.2) so late packets are answered or absorbed, then goes.
    private func lingerThenFinish() {
        timer?.cancel()
        let pto = connection.map { ngtcp2_conn_get_pto($0) } ?? 100_000_000
        timer = eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(Int64(min(pto * 3, 3_000_000_000)))) {
            [weak self] in
            guard let self else { return }
            self.finish(nil)
        }
    }

    /// The connection is over for its user: fail or finish everything waiting on it.
    private func end(_ reason: ConnectionCloseReason, failsHandshake: Bool) {
        if failsHandshake {
            if let mismatch = pinMismatch, let pinnedFingerprint {
                handshake.fail(ControlTransportError.fingerprintMismatch(expected: pinnedFingerprint, actual: mismatch))
            } else {
                handshake.fail(ControlTransportError.handshakeFailed("\(reason)"))
            }
        }
        let waiters = sendWaiters
        sendWaiters.removeAll()
        for waiter in waiters { waiter.fail(ControlTransportError.closed(reason)) }
        inbound.finish()
        closedPromise.succeed(reason)
    }

    /// Forgets the connection entirely.
    func finish(_ reason: ConnectionCloseReason?) {
        perform(lifecycle.finish(reason))
    }

    // MARK: ngtcp2 callbacks

    private static func core(_ userData: UnsafeMutableRawPointer?) -> QUICConnectionCore? {
        userData.map { Unmanaged<QUICConnectionCore>.fromOpaque($0).takeUnretainedValue() }
    }

    private static func callbacks(server: Bool) -> ngtcp2_callbacks {
        var callbacks = ngtcp2_callbacks()
        if server {
            callbacks.recv_client_initial = ngtcp2_crypto_recv_client_initial_cb
        } else {
            callbacks.client_initial = ngtcp2_crypto_client_initial_cb
            callbacks.recv_retry = ngtcp2_crypto_recv_retry_cb
        }
        callbacks.recv_crypto_data = ngtcp2_crypto_recv_crypto_data_cb
        callbacks.encrypt = ngtcp2_crypto_encrypt_cb
        callbacks.decrypt = ngtcp2_crypto_decrypt_cb
        callbacks.hp_mask = ngtcp2_crypto_hp_mask_cb
        callbacks.update_key = ngtcp2_crypto_update_key_cb
        callbacks.delete_crypto_aead_ctx = ngtcp2_crypto_delete_crypto_aead_ctx_cb
        callbacks.delete_crypto_cipher_ctx = ngtcp2_crypto_delete_crypto_cipher_ctx_cb
        callbacks.get_path_challenge_data = ngtcp2_crypto_get_path_challenge_data_cb
        callbacks.version_negotiation = ngtcp2_crypto_version_negotiation_cb
        callbacks.rand = { destination, length, _ in
            _ = gnutls_rnd(GNUTLS_RND_RANDOM, destination, length)
        }
        callbacks.get_new_connection_id = { _, cid, token, length, userData in
            guard let cid, let token, let core = QUICConnectionCore.core(userData) else {
                return NGTCP2_ERR_CALLBACK_FAILURE
            }
            var bytes = [UInt8](repeating: 0, count: length)
            _ = gnutls_rnd(GNUTLS_RND_RANDOM, &bytes, length)
            ngtcp2_cid_init(cid, bytes, length)
            guard
                QUICConnectionCore.resetToken(
                    into: UnsafeMutableRawBufferPointer(start: token, count: Int(NGTCP2_STATELESS_RESET_TOKENLEN)),
                    secret: core.resetSecret, cid: cid) == 0
            else { return NGTCP2_ERR_CALLBACK_FAILURE }
            core.issuedCIDs.insert(bytes)
            core.endpoint?.register(cid: bytes, for: core)
            return 0
        }
        callbacks.remove_connection_id = { _, cid, userData in
            guard let cid, let core = QUICConnectionCore.core(userData) else { return 0 }
            let bytes = QUICConnectionCore.bytes(of: cid.pointee)
            core.issuedCIDs.remove(bytes)
            core.endpoint?.unregister(cid: bytes)
            return 0
        }
        callbacks.handshake_completed = { _, userData in
            QUICConnectionCore.core(userData)?.handshakeCompleted() ?? NGTCP2_ERR_CALLBACK_FAILURE
        }
        callbacks.recv_stream_data = { _, flags, stream, _, data, length, userData, _ in
            guard let core = QUICConnectionCore.core(userData) else { return NGTCP2_ERR_CALLBACK_FAILURE }
            let bytes = UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : length)
            core.received(stream: stream, data: bytes, fin: flags & UInt32(NGTCP2_STREAM_DATA_FLAG_FIN) != 0)
            return 0
        }
        callbacks.acked_stream_data_offset = { _, stream, offset, length, userData, _ in
            QUICConnectionCore.core(userData)?.acknowledged(stream: stream, upTo: offset + length)
            return 0
        }
        callbacks.stream_close = { _, _, stream, _, userData, _ in
            if let core = QUICConnectionCore.core(userData), stream == core.controlStream {
                core.inbound.finish()
            }
            return 0
        }
        return callbacks
    }
}

/// Lets the receive queue's consumer reach the connection without keeping it alive.
///
/// `@unchecked Sendable`: `connection` is written once during initialisation, before the queue can call back,
/// and read only on the connection's event loop.
private final class WeakConnection: @unchecked Sendable {
    weak var connection: QUICConnectionCore?
}
