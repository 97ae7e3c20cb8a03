import Crypto

/// T of PROTOCOL.md §5: what the QR pairing tags authenticate.
struct QRPairingTranscript: Sendable, Hashable, Codable {
    var monitorId: String
    var monitorCertFingerprint: String
    var listenerId: String
    var listenerPublicKey: String
    var listenerCertFingerprint: String

    /// k = HKDF-SHA256(ikm: token bytes, salt: "cribcall/qr/v1", info: "", 32 bytes).
    static func key(for token: PairingToken) -> SymmetricKey {
        PairingCrypto.hkdf(ikm: token.bytes, salt: Array("cribcall/qr/v1".utf8), info: "")
    }

    /// The listener's `authTag`: HMAC-SHA256(k, JCS(T)).
    func authTag(key: SymmetricKey) -> String {
        PairingCrypto.tag(key: key, message: PairingCrypto.canonical(self))
    }

    /// The monitor's `confirmTag`: HMAC-SHA256(k, "monitor" ‖ JCS(T)).
    func confirmTag(key: SymmetricKey) -> String {
        PairingCrypto.tag(key: key, message: Array("monitor".utf8) + PairingCrypto.canonical(self))
    }

    func verifyAuthTag(_ tag: String, key: SymmetricKey) -> Bool {
        PairingCrypto.verify(tag: tag, key: key, message: PairingCrypto.canonical(self))
    }

    func verifyConfirmTag(_ tag: String, key: SymmetricKey) -> Bool {
        PairingCrypto.verify(tag: tag, key: key, message: Array("monitor".utf8) + PairingCrypto.canonical(self))
    }
}
