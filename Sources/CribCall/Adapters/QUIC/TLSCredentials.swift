import CNGTCP2
import DeviceIdentity

/// A GnuTLS certificate credential holding this device's Ed25519 certificate and key, shared by sessions.
///
/// `@unchecked Sendable`: the credential is filled once in `init` and only read afterwards (GnuTLS allows one
/// credential to be used by many sessions concurrently); it is freed in `deinit` when no session holds it.
final class TLSCredentials: @unchecked Sendable {
    let handle: gnutls_certificate_credentials_t
    /// The secret stateless-reset tokens are derived from; derived from the device key so it survives restarts.
    let statelessResetSecret: [UInt8]

    init(identity: DeviceIdentity) throws {
        var credentials: gnutls_certificate_credentials_t?
        var status = gnutls_certificate_allocate_credentials(&credentials)
        guard status == GNUTLS_E_SUCCESS, let credentials else {
            throw QUICError.tls("cannot allocate TLS credentials", status)
        }
        var certificate = Array(identity.certificatePEM.utf8)
        var key = Array(identity.privateKeyPEM().utf8)
        defer {
            // The PEM copy of the private key does not outlive this call.
            _ = key.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0) }
        }
        status = certificate.withUnsafeMutableBufferPointer { certificateBytes in
            key.withUnsafeMutableBufferPointer { keyBytes in
                var certificateDatum = gnutls_datum_t(
                    data: certificateBytes.baseAddress, size: UInt32(certificateBytes.count))
                var keyDatum = gnutls_datum_t(data: keyBytes.baseAddress, size: UInt32(keyBytes.count))
                return gnutls_certificate_set_x509_key_mem2(
                    credentials, &certificateDatum, &keyDatum, GNUTLS_X509_FMT_PEM, nil, 0)
            }
        }
        guard status >= 0 else {
            gnutls_certificate_free_credentials(credentials)
            throw QUICError.tls("GnuTLS refused the device certificate or key", status)
        }
        handle = credentials
        statelessResetSecret = identity.derivedSecret(label: "cribcall/quic/stateless-reset/v1")
    }

    deinit {
        gnutls_certificate_free_credentials(handle)
    }
}

/// Errors inside the adapter, mapped to `ControlTransportError` at its boundary.
enum QUICError: Error, CustomStringConvertible {
    case tls(String, Int32)
    case ngtcp2(String, Int32)

    var description: String {
        switch self {
        case .tls(let what, let code): "\(what) (\(String(cString: gnutls_strerror(code))))"
        case .ngtcp2(let what, let code): "\(what) (\(String(cString: ngtcp2_strerror(code))))"
        }
    }
}
