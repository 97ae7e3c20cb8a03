import DeviceIdentity
import Synchronization

/// The fingerprints of trusted listeners, readable synchronously from any session (the trust check of
/// `ControlSession` is a synchronous closure evaluated for every message).
final class TrustedSet: Sendable {
    private let fingerprints = Mutex<[CertificateFingerprint: String]>([:])

    /// Replaces the whole set (fingerprint → listenerId).
    func replace(with entries: [CertificateFingerprint: String]) {
        fingerprints.withLock { $0 = entries }
    }

    /// The listener id trusted under `fingerprint`, if any.
    func listenerId(for fingerprint: CertificateFingerprint) -> String? {
        fingerprints.withLock { $0[fingerprint] }
    }
}
