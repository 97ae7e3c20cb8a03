public import Crypto
public import Foundation
import SwiftASN1
public import X509

/// A device's long-term identity (PROTOCOL.md §1): a random UUID, an Ed25519 key pair and a self-signed
/// X.509 v3 certificate over it with subject CN = deviceId and SAN URI `cribcall:<deviceId>`.
///
/// Creating and validating an identity is pure; reading and writing it belongs to `DeviceIdentityStore`.
/// The private key never appears in `description` or `debugDescription`.
public struct DeviceIdentity: Sendable {
    /// How long a device certificate is valid.
    public static let validityYears = 20

    /// The device's id, also the certificate's CN and SAN URI.
    public let deviceId: UUID
    /// The self-signed certificate.
    public let certificate: Certificate
    /// The certificate's DER bytes, exactly as presented in TLS.
    public let certificateDER: [UInt8]
    /// SHA-256 of `certificateDER`.
    public let fingerprint: CertificateFingerprint
    let privateKey: Curve25519.Signing.PrivateKey

    /// Creates a new identity: fresh key, fresh serial, validity from `now` for 20 years.
    /// - Parameters:
    ///   - deviceId: The id to certify; a new random UUID by default.
    ///   - now: The start of the validity period (the core has no clock; the caller passes it).
    /// - Throws: `DeviceIdentityError` with code `.certificateCreationFailed` if the X.509 library fails.
    public static func generate(deviceId: UUID = UUID(), now: Date) throws(DeviceIdentityError) -> DeviceIdentity {
        let key = Curve25519.Signing.PrivateKey()
        let certificate: Certificate
        do {
            let name = try DistinguishedName { CommonName(deviceId.lowercasedString) }
            let signingKey = Certificate.PrivateKey(key)
            certificate = try Certificate(
                version: .v3,
                serialNumber: .randomPositive(),
                publicKey: signingKey.publicKey,
                notValidBefore: now.addingTimeInterval(-60),
                notValidAfter: now.addingTimeInterval(Double(validityYears) * 365.25 * 86_400),
                issuer: name,
                subject: name,
                signatureAlgorithm: .ed25519,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.notCertificateAuthority)
                    Critical(KeyUsage(digitalSignature: true))
                    SubjectAlternativeNames([.uniformResourceIdentifier(Self.sanURI(for: deviceId))])
                },
                issuerPrivateKey: signingKey
            )
        } catch {
            throw DeviceIdentityError(.certificateCreationFailed, "could not create the device certificate: \(error)")
        }
        return try DeviceIdentity(privateKey: key, certificate: certificate)
    }

    /// Rebuilds a stored identity and checks that it is whole: the certificate parses, has the shape of
    /// PROTOCOL.md §1, is self-signed by this key, and certifies this key.
    /// - Parameters:
    ///   - privateKeyPEM: The PKCS#8 `PRIVATE KEY` PEM block of the Ed25519 key.
    ///   - certificatePEM: The `CERTIFICATE` PEM block.
    /// - Throws: `DeviceIdentityError` saying which part is broken.
    public init(privateKeyPEM: String, certificatePEM: String) throws(DeviceIdentityError) {
        let key = try Self.parsePrivateKey(pem: privateKeyPEM)
        let certificate: Certificate
        do {
            certificate = try Certificate(pemEncoded: certificatePEM)
        } catch {
            throw DeviceIdentityError(
                .invalidCertificate, "the device certificate is not a valid PEM X.509 certificate")
        }
        try self.init(privateKey: key, certificate: certificate)
    }

    init(privateKey: Curve25519.Signing.PrivateKey, certificate: Certificate) throws(DeviceIdentityError) {
        let der: [UInt8]
        do {
            der = try Self.derBytes(of: certificate)
        } catch {
            throw DeviceIdentityError(.invalidCertificate, "the device certificate cannot be DER-encoded: \(error)")
        }
        guard certificate.publicKey == Certificate.PublicKey(privateKey.publicKey) else {
            throw DeviceIdentityError(.keyMismatch, "the device certificate was not issued for the stored private key")
        }
        guard certificate.publicKey.isValidSignature(certificate.signature, for: certificate) else {
            throw DeviceIdentityError(.invalidCertificate, "the device certificate's self-signature does not verify")
        }
        let deviceId = try Self.deviceId(of: certificate)
        self.deviceId = deviceId
        self.certificate = certificate
        self.certificateDER = der
        self.fingerprint = CertificateFingerprint(certificateDER: der)
        self.privateKey = privateKey
    }

    /// The SubjectPublicKeyInfo DER of the public key (the wire form of `listenerPublicKey`/`monitorPublicKey`).
    public var publicKeySPKI: [UInt8] {
        Self.spki(of: certificate.publicKey)
    }

    /// The raw 32-byte Ed25519 public key.
    public var publicKey: Curve25519.Signing.PublicKey { privateKey.publicKey }

    /// The certificate as a PEM block.
    public var certificatePEM: String {
        PEMDocument(type: "CERTIFICATE", derBytes: certificateDER).pemString
    }

    /// The private key as a PKCS#8 PEM block, for the store and the TLS adapter only. Never log it.
    public func privateKeyPEM() -> String {
        PEMDocument(type: "PRIVATE KEY", derBytes: Self.pkcs8Prefix + Array(privateKey.rawRepresentation)).pemString
    }

    /// A secret derived from the device key for one purpose (HKDF-SHA256 over the private key, `label` as info).
    ///
    /// Stable for the life of the identity, so state built from it survives restarts (e.g. QUIC stateless-reset
    /// tokens), and useless for anything else: the label separates purposes. Never log it.
    /// - Parameters:
    ///   - label: What the secret is for, e.g. `cribcall/quic/stateless-reset/v1`.
    ///   - byteCount: How many bytes to derive, 1 through 8160 (255 SHA-256 blocks, the HKDF limit).
    public func derivedSecret(label: String, byteCount: Int = 32) -> [UInt8] {
        precondition((1...255 * SHA256.byteCount).contains(byteCount), "HKDF-SHA256 derives 1 to 8160 bytes")
        // HKDF-Extract through swift-crypto; HKDF-Expand (RFC 5869 §2.3) written out with HMAC, because HMAC
        // codes are byte sequences while a derived `SymmetricKey` can only be read through a raw pointer.
        // The output is identical to `HKDF<SHA256>.deriveKey(…, outputByteCount: byteCount)`.
        let pseudoRandomKey = SymmetricKey(
            data: HKDF<SHA256>.extract(
                inputKeyMaterial: SymmetricKey(data: privateKey.rawRepresentation),
                salt: Array("cribcall/device-identity/derived".utf8)
            )
        )
        let info = Array(label.utf8)
        var output: [UInt8] = []
        output.reserveCapacity(byteCount + SHA256.byteCount)
        var block: [UInt8] = []
        var counter: UInt8 = 0
        while output.count < byteCount {
            counter += 1
            var hmac = HMAC<SHA256>(key: pseudoRandomKey)
            hmac.update(data: block)
            hmac.update(data: info)
            hmac.update(data: [counter])
            block = Array(hmac.finalize())
            output += block
        }
        output.removeLast(output.count - byteCount)
        return output
    }

    /// Signs bytes with the device key.
    public func sign(_ data: some DataProtocol) throws -> Data {
        try privateKey.signature(for: data)
    }

    /// The SAN URI of a device id: `cribcall:<lowercase uuid>`.
    public static func sanURI(for deviceId: UUID) -> String {
        "cribcall:" + deviceId.lowercasedString
    }

    /// The SubjectPublicKeyInfo DER of a certificate's public key.
    public static func spki(of publicKey: Certificate.PublicKey) -> [UInt8] {
        // Serializing a public key cannot fail for the key types swift-certificates can hold.
        (try? derBytes(of: publicKey)) ?? []
    }

    /// Reads the device id certified by a DER certificate (e.g. the one a peer presented in TLS).
    /// - Throws: `DeviceIdentityError.invalidCertificate` if it does not parse or carries no `cribcall:` URI.
    public static func deviceId(ofCertificateDER der: [UInt8]) throws(DeviceIdentityError) -> UUID {
        let certificate: Certificate
        do {
            certificate = try Certificate(derEncoded: der)
        } catch {
            throw DeviceIdentityError(.invalidCertificate, "the peer certificate is not valid X.509")
        }
        return try deviceId(of: certificate)
    }

    /// Reads the device id certified by a certificate from its SAN URI, and checks the CN agrees.
    /// - Throws: `DeviceIdentityError.invalidCertificate` if there is not exactly one `cribcall:` URI holding a UUID.
    public static func deviceId(of certificate: Certificate) throws(DeviceIdentityError) -> UUID {
        let names: SubjectAlternativeNames?
        do {
            names = try certificate.extensions.subjectAlternativeNames
        } catch {
            throw DeviceIdentityError(.invalidCertificate, "the certificate's subjectAltName extension is malformed")
        }
        let uris = (names.map(Array.init) ?? []).compactMap { name -> String? in
            if case .uniformResourceIdentifier(let uri) = name, uri.hasPrefix("cribcall:") { return uri }
            return nil
        }
        guard uris.count == 1, let id = UUID(uuidString: String(uris[0].dropFirst("cribcall:".count))) else {
            throw DeviceIdentityError(
                .invalidCertificate,
                "the certificate must carry exactly one subjectAltName URI cribcall:<deviceId>"
            )
        }
        return id
    }

    static func derBytes(of value: some DERSerializable) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(value)
        return serializer.serializedBytes
    }

    /// RFC 8410 §7: the PKCS#8 encoding of an Ed25519 private key is this fixed prefix and the 32 key bytes.
    static let pkcs8Prefix: [UInt8] = [
        0x30, 0x2E, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
    ]

    static func parsePrivateKey(pem: String) throws(DeviceIdentityError) -> Curve25519.Signing.PrivateKey {
        let document: PEMDocument
        do {
            document = try PEMDocument(pemString: pem)
        } catch {
            throw DeviceIdentityError(.invalidPrivateKey, "the device private key is not a valid PEM block")
        }
        let der = document.derBytes
        guard document.discriminator == "PRIVATE KEY", der.count == pkcs8Prefix.count + 32,
            Array(der.prefix(pkcs8Prefix.count)) == pkcs8Prefix,
            let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: der.suffix(32))
        else {
            throw DeviceIdentityError(.invalidPrivateKey, "the device private key is not a PKCS#8 Ed25519 key")
        }
        return key
    }
}

extension DeviceIdentity: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String {
        "DeviceIdentity(deviceId: \(deviceId.lowercasedString), fingerprint: \(fingerprint.hex))"
    }

    public var debugDescription: String { description }
}

extension UUID {
    /// The lowercase hyphenated form PROTOCOL.md uses everywhere.
    public var lowercasedString: String { uuidString.lowercased() }
}

extension Certificate.SerialNumber {
    /// 16 random bytes with the top bit cleared, so the DER INTEGER is positive (PROTOCOL.md §1, RFC 5280 §4.1.2.2).
    static func randomPositive() -> Certificate.SerialNumber {
        var generator = SystemRandomNumberGenerator()
        var bytes = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        bytes[0] = (bytes[0] & 0x3F) | 0x40  // top bit clear: positive; next bit set: exactly 16 bytes
        return Certificate.SerialNumber(bytes: bytes)
    }
}
