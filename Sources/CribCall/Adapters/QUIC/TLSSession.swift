import CNGTCP2

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Builds the GnuTLS session of one QUIC connection: TLS 1.3 with QUIC's cipher suites only, the device
/// certificate on both sides, a required client certificate, strict ALPN, and certificate checks done by
/// `QUICConnectionCore.verifyPeer` *inside* the handshake (GnuTLS itself verifies nothing: there is no CA).
enum TLSSession {
    /// QUIC-compatible TLS 1.3 suites; NORMAL keeps Ed25519 signatures; no TLS 1.3 middlebox compatibility mode.
    static let priority =
        "NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+AES-128-GCM:+AES-256-GCM:+CHACHA20-POLY1305:+AES-128-CCM:"
        + "%DISABLE_TLS13_COMPAT_MODE"

    static func make(
        server: Bool,
        credentials: TLSCredentials,
        alpn: String,
        connectionReference: UnsafeMutablePointer<ngtcp2_crypto_conn_ref>
    ) throws -> gnutls_session_t {
        var created: gnutls_session_t?
        let flags =
            (server ? GNUTLS_SERVER.rawValue | GNUTLS_NO_AUTO_SEND_TICKET.rawValue : GNUTLS_CLIENT.rawValue)
            | GNUTLS_NO_END_OF_EARLY_DATA.rawValue
        var status = gnutls_init(&created, flags)
        guard status == GNUTLS_E_SUCCESS, let session = created else { throw QUICError.tls("gnutls_init", status) }
        do {
            let configured =
                server
                ? ngtcp2_crypto_gnutls_configure_server_session(session)
                : ngtcp2_crypto_gnutls_configure_client_session(session)
            guard configured == 0 else { throw QUICError.tls("ngtcp2 could not configure the TLS session", -1) }
            status = gnutls_priority_set_direct(session, priority, nil)
            guard status == GNUTLS_E_SUCCESS else { throw QUICError.tls("TLS priority", status) }
            gnutls_session_set_ptr(session, connectionReference)
            status = gnutls_credentials_set(
                session, GNUTLS_CRD_CERTIFICATE, UnsafeMutableRawPointer(credentials.handle))
            guard status == GNUTLS_E_SUCCESS else { throw QUICError.tls("TLS credentials", status) }
            var protocolName = Array(alpn.utf8)
            status = protocolName.withUnsafeMutableBufferPointer { name in
                var datum = gnutls_datum_t(data: name.baseAddress, size: UInt32(name.count))
                let alpnFlags = GNUTLS_ALPN_MANDATORY.rawValue | (server ? GNUTLS_ALPN_SERVER_PRECEDENCE.rawValue : 0)
                return gnutls_alpn_set_protocols(session, &datum, 1, alpnFlags)
            }
            guard status == GNUTLS_E_SUCCESS else { throw QUICError.tls("ALPN", status) }
            gnutls_session_set_verify_function(session, verifyPeerCallback)
            if server {
                gnutls_certificate_server_set_request(session, GNUTLS_CERT_REQUIRE)
                // GnuTLS accepts a ClientHello without ALPN even when ALPN is "mandatory": check it ourselves.
                gnutls_handshake_set_hook_function(
                    session, UInt32(GNUTLS_HANDSHAKE_CLIENT_HELLO.rawValue), GNUTLS_HOOK_POST, clientHelloHook)
            }
            return session
        } catch {
            gnutls_deinit(session)
            throw error
        }
    }

    /// The connection a GnuTLS session belongs to.
    static func connection(of session: gnutls_session_t) -> QUICConnectionCore? {
        guard let pointer = gnutls_session_get_ptr(session) else { return nil }
        let reference = pointer.assumingMemoryBound(to: ngtcp2_crypto_conn_ref.self)
        guard let userData = reference.pointee.user_data else { return nil }
        return Unmanaged<QUICConnectionCore>.fromOpaque(userData).takeUnretainedValue()
    }
}

/// Runs after the peer's Certificate and CertificateVerify, before Finished: a non-zero result aborts the handshake.
private let verifyPeerCallback: @convention(c) (gnutls_session_t?) -> Int32 = { session in
    guard let session, let connection = TLSSession.connection(of: session) else { return GNUTLS_E_CERTIFICATE_ERROR }
    return connection.verifyPeer(session: session)
}

/// Refuses a ClientHello that did not select our ALPN.
private let clientHelloHook:
    @convention(c) (
        gnutls_session_t?, UInt32, UInt32, UInt32, UnsafePointer<gnutls_datum_t>?
    ) -> Int32 = { session, _, _, _, _ in
        guard let session, let connection = TLSSession.connection(of: session) else {
            return GNUTLS_E_NO_APPLICATION_PROTOCOL
        }
        var selected = gnutls_datum_t()
        guard gnutls_alpn_get_selected_protocol(session, &selected) == GNUTLS_E_SUCCESS, let data = selected.data else {
            return GNUTLS_E_NO_APPLICATION_PROTOCOL
        }
        let chosen = Array(UnsafeBufferPointer(start: data, count: Int(selected.size)))
        return chosen == Array(connection.alpn.utf8) ? GNUTLS_E_SUCCESS : GNUTLS_E_NO_APPLICATION_PROTOCOL
    }
