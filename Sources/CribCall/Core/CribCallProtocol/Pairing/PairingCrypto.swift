import CanonicalJSON
import Crypto
import Foundation

/// The small cryptographic helpers both pairing flows share: encodings, HKDF, HMAC over JCS.
enum PairingCrypto {
    /// Standard padded base64 (PROTOCOL.md §6b).
    static func base64(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString()
    }

    /// Decodes standard base64 and checks the length when one is required.
    static func decodeBase64(_ text: String, count: Int? = nil) -> [UInt8]? {
        guard text.utf8.count <= 4096, let data = Data(base64Encoded: text) else { return nil }
        if let count, data.count != count { return nil }
        return Array(data)
    }

    /// base64url without padding (the QR pairing token).
    static func base64URL(_ bytes: some Sequence<UInt8>) -> String {
        base64(bytes).replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func decodeBase64URL(_ text: String) -> [UInt8]? {
        guard text.utf8.count <= 4096,
            text.utf8.allSatisfy({ $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "=") })
        else { return nil }
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.utf8.count % 4 != 0 { standard += "=" }
        return Data(base64Encoded: standard).map(Array.init)
    }

    static func hkdf(ikm: some ContiguousBytes, salt: some DataProtocol, info: String) -> SymmetricKey {
        hkdf(ikm: SymmetricKey(data: ikm), salt: salt, info: info)
    }

    /// HKDF-SHA256 to 32 bytes over key material already held as a `SymmetricKey` (no copy of the bytes).
    static func hkdf(ikm: SymmetricKey, salt: some DataProtocol, info: String) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, salt: salt, info: Array(info.utf8), outputByteCount: 32)
    }

    /// The JCS bytes of a record.
    static func canonical(_ value: some Encodable) -> [UInt8] {
        do {
            return try JSONValueEncoder().encode(value).canonicalBytes()
        } catch {
            preconditionFailure("pairing transcript failed to encode: \(error)")
        }
    }

    static func tag(key: SymmetricKey, message: [UInt8]) -> String {
        base64(HMAC<SHA256>.authenticationCode(for: message, using: key))
    }

    /// Verifies a base64 tag in constant time.
    static func verify(tag: String, key: SymmetricKey, message: [UInt8]) -> Bool {
        guard let bytes = decodeBase64(tag, count: 32) else { return false }
        return HMAC<SHA256>.isValidAuthenticationCode(bytes, authenticating: message, using: key)
    }

    /// The lowercase UUID form, or nil if `text` is not a UUID.
    static func canonicalUUID(_ text: String) -> String? {
        guard text.utf8.count == 36, let uuid = UUID(uuidString: text) else { return nil }
        return uuid.uuidString.lowercased()
    }
}
