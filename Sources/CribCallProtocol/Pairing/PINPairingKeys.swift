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
        withUnsafeBytes(of: pairingSessionId.uuid) { Array($0) } + nonce
    }

    /// kL, kM = HKDF-SHA256(ikm: ISK, salt: sid, info: "cribcall/pin/v1 listener" / "… monitor", 32 bytes).
    static func derive(isk: CPaceSessionKey, sid: [UInt8]) -> (listener: SymmetricKey, monitor: SymmetricKey) {
        isk.withUnsafeBytes { ikm in
            (
                PairingCrypto.hkdf(ikm: ikm, salt: sid, info: label + " listener"),
                PairingCrypto.hkdf(ikm: ikm, salt: sid, info: label + " monitor")
            )
        }
    }
}
