import Crypto
import DeviceIdentity
import Foundation
import Testing

@Suite("DeviceIdentity.derivedSecret: HKDF-SHA256 over the device key")
struct DerivedSecretTests {
    /// The raw 32-byte Ed25519 seed, read back from the PKCS#8 PEM (the key is the DER's last 32 bytes).
    func rawPrivateKey(_ identity: DeviceIdentity) throws -> [UInt8] {
        let body = identity.privateKeyPEM().split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        let der = try #require(Data(base64Encoded: body))
        return Array(der.suffix(32))
    }

    @Test(
        "equals swift-crypto's HKDF<SHA256>.deriveKey for every output length class",
        arguments: [
            1, 16, 31, 32, 33, 63, 64, 65, 100, 255 * 32,
        ])
    func matchesSwiftCryptoHKDF(byteCount: Int) throws {
        let identity = try DeviceIdentity.generate(deviceId: UUID(), now: Date())
        let raw = try rawPrivateKey(identity)
        #expect(
            try Curve25519.Signing.PrivateKey(rawRepresentation: raw).publicKey.rawRepresentation
                == identity.publicKey.rawRepresentation)
        let label = "cribcall/test/derived/v1"
        let expected = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: raw),
            salt: Array("cribcall/device-identity/derived".utf8),
            info: Array(label.utf8),
            outputByteCount: byteCount
        )
        let derived = identity.derivedSecret(label: label, byteCount: byteCount)
        #expect(derived.count == byteCount)
        #expect(SymmetricKey(data: derived) == expected)
    }

    @Test("is stable per identity and separated by label; the default length is 32 bytes")
    func stableAndSeparated() throws {
        let identity = try DeviceIdentity.generate(deviceId: UUID(), now: Date())
        let reloaded = try DeviceIdentity(
            privateKeyPEM: identity.privateKeyPEM(),
            certificatePEM: identity.certificatePEM
        )
        let a = identity.derivedSecret(label: "cribcall/quic/stateless-reset/v1")
        #expect(a.count == 32)
        #expect(reloaded.derivedSecret(label: "cribcall/quic/stateless-reset/v1") == a)
        #expect(identity.derivedSecret(label: "cribcall/other/v1") != a)
        #expect(identity.derivedSecret(label: "cribcall/quic/stateless-reset/v1", byteCount: 64).prefix(32) == a[...])
        let other = try DeviceIdentity.generate(deviceId: UUID(), now: Date())
        #expect(other.derivedSecret(label: "cribcall/quic/stateless-reset/v1") != a)
    }
}
