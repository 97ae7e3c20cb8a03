import Crypto
import DeviceIdentity
import Foundation
import TestSupport
import Testing
import X509

@Suite("DeviceIdentity: the certificate PROTOCOL.md §1 describes")
struct DeviceIdentityTests {
    let now = Date(timeIntervalSince1970: 1_790_000_000)

    @Test("a new identity is a self-signed Ed25519 certificate for cribcall:<deviceId>")
    func generatedCertificateShape() throws {
        let id = UUID()
        let identity = try DeviceIdentity.generate(deviceId: id, now: now)
        #expect(identity.deviceId == id)
        #expect(try DeviceIdentity.deviceId(of: identity.certificate) == id)
        #expect(identity.certificate.version == .v3)
        #expect(identity.certificate.signatureAlgorithm == .ed25519)
        #expect(identity.certificate.subject == identity.certificate.issuer)
        #expect(identity.certificate.subject.description.contains(id.uuidString.lowercased()))
        let sans = try #require(try identity.certificate.extensions.subjectAlternativeNames)
        #expect(Array(sans) == [.uniformResourceIdentifier("cribcall:\(id.uuidString.lowercased())")])
        let years =
            identity.certificate.notValidAfter.timeIntervalSince(identity.certificate.notValidBefore)
            / (365.25 * 86_400)
        #expect(years > 19.99 && years < 20.01)
        #expect(identity.certificate.serialNumber.bytes.count == 16)
    }

    @Test("the fingerprint is the lowercase hex SHA-256 of the certificate DER")
    func fingerprintIsSHA256OfDER() throws {
        let identity = try DeviceIdentity.generate(now: now)
        let expected = SHA256.hash(data: identity.certificateDER).map { String(format: "%02x", $0) }.joined()
        #expect(identity.fingerprint.hex == expected)
        #expect(identity.fingerprint.hex.count == 64)
        #expect(CertificateFingerprint(hex: expected.uppercased()) == identity.fingerprint)
    }

    @Test("two identities differ in id, key, serial and fingerprint")
    func identitiesAreUnique() throws {
        let a = try DeviceIdentity.generate(now: now)
        let b = try DeviceIdentity.generate(now: now)
        #expect(a.deviceId != b.deviceId)
        #expect(a.publicKeySPKI != b.publicKeySPKI)
        #expect(a.certificate.serialNumber != b.certificate.serialNumber)
        #expect(a.fingerprint != b.fingerprint)
    }

    @Test("PEM round trip restores the same identity")
    func pemRoundTrip() throws {
        let identity = try DeviceIdentity.generate(now: now)
        let restored = try DeviceIdentity(
            privateKeyPEM: identity.privateKeyPEM(), certificatePEM: identity.certificatePEM)
        #expect(restored.deviceId == identity.deviceId)
        #expect(restored.fingerprint == identity.fingerprint)
        #expect(restored.certificateDER == identity.certificateDER)
        #expect(restored.publicKeySPKI == identity.publicKeySPKI)
        let message = Array("hello".utf8)
        let signature = try restored.sign(message)
        #expect(identity.publicKey.isValidSignature(signature, for: message))
    }

    @Test("a certificate stored with another device's key is refused, not repaired")
    func keyMismatchIsRefused() throws {
        let a = try DeviceIdentity.generate(now: now)
        let b = try DeviceIdentity.generate(now: now)
        let error = #expect(throws: DeviceIdentityError.self) {
            try DeviceIdentity(privateKeyPEM: a.privateKeyPEM(), certificatePEM: b.certificatePEM)
        }
        #expect(error?.code == .keyMismatch)
    }

    @Test("garbage key or certificate PEM gives an error naming the broken part")
    func garbageIsRefused() throws {
        let identity = try DeviceIdentity.generate(now: now)
        let badKey = #expect(throws: DeviceIdentityError.self) {
            try DeviceIdentity(
                privateKeyPEM: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
                certificatePEM: identity.certificatePEM)
        }
        #expect(badKey?.code == .invalidPrivateKey)
        let badCert = #expect(throws: DeviceIdentityError.self) {
            try DeviceIdentity(privateKeyPEM: identity.privateKeyPEM(), certificatePEM: "not a certificate")
        }
        #expect(badCert?.code == .invalidCertificate)
    }

    @Test("descriptions never contain the private key")
    func noSecretsInDescriptions() throws {
        let identity = try DeviceIdentity.generate(now: now)
        let pem = identity.privateKeyPEM()
        let body = pem.split(separator: "\n").dropFirst().first.map(String.init) ?? "unreachable"
        for text in [
            identity.description, identity.debugDescription, String(describing: identity),
            "\(IdentitySummary(identity))",
        ] {
            #expect(!text.contains(body))
            #expect(!text.contains("PRIVATE"))
        }
    }

    @Test("fingerprints compare by value and reject malformed hex")
    func fingerprintParsing() {
        #expect(CertificateFingerprint(hex: String(repeating: "a", count: 63)) == nil)
        #expect(CertificateFingerprint(hex: String(repeating: "g", count: 64)) == nil)
        let a = CertificateFingerprint(hex: String(repeating: "ab", count: 32))
        let b = CertificateFingerprint(hex: String(repeating: "AB", count: 32))
        #expect(a != nil && a == b)
        #expect(a?.hex == String(repeating: "ab", count: 32))
        #expect(ConstantTime.equals([1, 2, 3], [1, 2, 3]))
        #expect(!ConstantTime.equals([1, 2, 3], [1, 2, 4]))
        #expect(!ConstantTime.equals([1, 2, 3], [1, 2]))
    }

    @Test("the DTLS certificate is ECDSA P-256 and its SDP fingerprint is its DER digest")
    func dtlsCertificate() throws {
        let dtls = try DTLSCertificate.generate(now: now)
        #expect(dtls.certificate.signatureAlgorithm == .ecdsaWithSHA256)
        #expect(P256.Signing.PublicKey(dtls.certificate.publicKey) != nil)
        let digest = SHA256.hash(data: dtls.certificateDER).map { String(format: "%02X", $0) }.joined(separator: ":")
        #expect(dtls.sdpFingerprint == "sha-256 " + digest)
        let restored = try DTLSCertificate(privateKeyPEM: dtls.privateKeyPEM(), certificatePEM: dtls.certificatePEM)
        #expect(restored.certificateDER == dtls.certificateDER)
    }
}
