import CPace
import Crypto
import DeviceIdentity
import Foundation

/// The CPace inputs and the keys derived from its output, exactly as PROTOCOL.md §6 defines them.
enum PINPairingKeys {
    static let label = "cribcall/pin/v1"

    /// CI = lv_cat("cribcall/pin/v1", fp_monitor, fp_listener), raw 32-byte fingerprints seen in TLS.
    static func channelIdentifier(monitor: CertificateFingerprint, listener: CertificateFingerprint) -> [UInt8] {
        CPace.lvCat([Array(label.utf8), monitor.bytes, listener.bytes])
    }

    /// sid = the 16 bytes of pairingSessionId in RFC 9562 (network) byte order ‖ the 16 nonce bytes.
    static func sessionIdentifier(pairingSessionId: UUID, nonce: [UInt8]) -> [UInt8] {
        let u = pairingSessionId.uuid
        let uuidBytes: [UInt8] = [
            u.0, u.1, u.2, u.3, u.4, u.5, u.6, u.7, u.8, u.9, u.10, u.11, u.12, u.13, u.14, u.15,
        ]
        return uuidBytes + nonce
    }

    /// kL, kM = HKDF-SHA256(ikm: ISK, salt: sid, info: "cribcall/pin/v1 listener" / "… monitor", 32 bytes).
    static func derive(isk: CPaceSessionKey, sid: [UInt8]) -> (listener: SymmetricKey, monitor: SymmetricKey) {
        (
            PairingCrypto.hkdf(ikm: isk.symmetricKey, salt: sid, info: label + " listener"),
            PairingCrypto.hkdf(ikm: isk.symmetricKey, salt: sid, info: label + " monitor")
        )
    }
}
