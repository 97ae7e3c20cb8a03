import Crypto
public import Foundation
import SwiftASN1
public import X509

/// The WebRTC DTLS certificate of a device (PROTOCOL.md §1): ECDSA P-256, created once and kept, separate
/// from the Ed25519 device identity (strict peers such as aiortc refuse RSA-only DTLS and browsers do not
/// accept Ed25519 for DTLS).
public struct DTLSCertificate: Sendable {
    /// The certificate.
    public let certificate: Certificate
    /// The certificate's DER bytes.
    public let certificateDER: [UInt8]
    let privateKey: P256.Signing.PrivateKey

    /// Creates a new P-256 certificate valid from `now` for 20 years.
    /// - Parameters:
    ///   - commonName: The subject and issuer CN.
    ///   - now: The start of the validity period.
    public static func generate(commonName: String = "cribcall-dtls", now: Date) throws(DeviceIdentityError) -> Self {
        let key = P256.Signing.PrivateKey()
        do {
            let name = try DistinguishedName { CommonName(commonName) }
            let signingKey = Certificate.PrivateKey(key)
            let certificate = try Certificate(
                version: .v3,
                serialNumber: .randomPositive(),
                publicKey: signingKey.publicKey,
                notValidBefore: now.addingTimeInterval(-60),
                notValidAfter: now.addingTimeInterval(Double(DeviceIdentity.validityYears) * 365.25 * 86_400),
                issuer: name,
                subject: name,
                signatureAlgorithm: .ecdsaWithSHA256,
                extensions: Certificate.Extensions(),
                issuerPrivateKey: signingKey
            )
            return try DTLSCertificate(privateKey: key, certificate: certificate)
        } catch let error as DeviceIdentityError {
            throw error
        } catch {
            throw DeviceIdentityError(.certificateCreationFailed, "could not create the DTLS certificate: \(error)")
        }
    }

    /// Rebuilds a stored DTLS certificate and checks that it belongs to the key.
    /// - Throws: `DeviceIdentityError` saying which part is broken.
    public init(privateKeyPEM: String, certificatePEM: String) throws(DeviceIdentityError) {
        let key: P256.Signing.PrivateKey
        do {
            key = try P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM)
        } catch {
            throw DeviceIdentityError(.invalidPrivateKey, "the DTLS private key is not a valid P-256 PEM key")
        }
        let certificate: Certificate
        do {
            certificate = try Certificate(pemEncoded: certificatePEM)
        } catch {
            throw DeviceIdentityError(.invalidCertificate, "the DTLS certificate is not a valid PEM X.509 certificate")
        }
        try self.init(privateKey: key, certificate: certificate)
    }

    init(privateKey: P256.Signing.PrivateKey, certificate: Certificate) throws(DeviceIdentityError) {
        guard certificate.publicKey == Certificate.PublicKey(privateKey.publicKey) else {
            throw DeviceIdentityError(.keyMismatch, "the DTLS certificate was not issued for the stored private key")
        }
        do {
            self.certificateDER = try DeviceIdentity.derBytes(of: certificate)
        } catch {
            throw DeviceIdentityError(.invalidCertificate, "the DTLS certificate cannot be DER-encoded: \(error)")
        }
        self.certificate = certificate
        self.privateKey = privateKey
    }

    /// The certificate as a PEM block.
    public var certificatePEM: String {
        PEMDocument(type: "CERTIFICATE", derBytes: certificateDER).pemString
    }

    /// The private key as a PKCS#8 PEM block, for the store and the media adapter only. Never log it.
    public func privateKeyPEM() -> String {
        privateKey.pemRepresentation
    }

    /// The SDP `a=fingerprint` value: `sha-256` and the uppercase colon-separated digest (RFC 8122).
    public var sdpFingerprint: String {
        Self.sdpFingerprint(ofCertificateDER: certificateDER)
    }

    /// The SDP `a=fingerprint` value of any DER certificate: `sha-256` and the uppercase colon-separated digest.
    public static func sdpFingerprint(ofCertificateDER der: [UInt8]) -> String {
        "sha-256 "
            + SHA256.hash(data: der).map { byte in
                let hex = String(byte, radix: 16, uppercase: true)
                return byte < 16 ? "0" + hex : hex
            }.joined(separator: ":")
    }
}

extension DTLSCertificate: CustomStringConvertible {
    public var description: String { "DTLSCertificate(\(sdpFingerprint))" }
}
