public import DeviceIdentity
import DeviceIdentityStore
public import Foundation
public import JWTKit

/// The hub's secrets in its data directory, each 0600: the Ed25519 key that signs access tokens (`signing-key.pem`),
/// the owner's admin key (`admin-token`, 256 bits in hex) that `createPairingCode` needs, and its TLS identity
/// (`tls.pem`: an ECDSA P-256 key and the self-signed certificate the app pins; P-256 because Apple's TLS stack is
/// not known to take Ed25519 certificates).
public struct HubSecrets: Sendable {
    public let signingKey: EdDSA.PrivateKey
    /// The `kid` of the tokens: the first 16 hex digits of the public key's SHA-256.
    public let keyId: String
    public let adminKey: String
    public let tls: DTLSCertificate

    /// What the app pins: the SHA-256 of the certificate's DER bytes, 64 lowercase hex digits.
    public var certificateFingerprint: String { CertificateFingerprint(certificateDER: tls.certificateDER).hex }

    public static func tlsFile(_ directory: URL) -> URL { directory.appendingPathComponent("tls.pem") }

    public static func signingKeyFile(_ directory: URL) -> URL { directory.appendingPathComponent("signing-key.pem") }
    public static func adminKeyFile(_ directory: URL) -> URL { directory.appendingPathComponent("admin-token") }

    /// Loads both, creating them on the first start.
    public static func loadOrCreate(directory: URL) throws -> HubSecrets {
        let pem = try SecretFile.loadOrCreate(signingKeyFile(directory)) {
            try EdDSA.PrivateKey(curve: .ed25519).pemRepresentation + "\n"
        }
        let key = try EdDSA.PrivateKey(pem: pem)
        let admin = try SecretFile.loadOrCreate(adminKeyFile(directory)) {
            // 256 bits from the system CSPRNG (UInt8.random uses SystemRandomNumberGenerator)
            (0..<32).map { _ in String(format: "%02x", UInt8.random(in: .min ... .max)) }.joined() + "\n"
        }
        let identity = try SecretFile.loadOrCreate(tlsFile(directory)) {
            let made = try DTLSCertificate.generate(commonName: "argus-hub", now: Date())
            return made.privateKeyPEM() + made.certificatePEM
        }
        let tls = try DTLSCertificate(
            privateKeyPEM: try block("PRIVATE KEY", in: identity, file: tlsFile(directory)),
            certificatePEM: try block("CERTIFICATE", in: identity, file: tlsFile(directory)))
        let digest = CertificateFingerprint(certificateDER: key.publicKey.rawRepresentation).hex  // SHA-256, hex
        return HubSecrets(
            signingKey: key, keyId: String(digest.prefix(16)),
            adminKey: admin.trimmingCharacters(in: .whitespacesAndNewlines), tls: tls)
    }

    /// The PEM block of `type` in `text`.
    static func block(_ type: String, in text: String, file: URL) throws -> String {
        guard let start = text.range(of: "-----BEGIN \(type)-----"),
            let end = text.range(of: "-----END \(type)-----", range: start.upperBound..<text.endIndex)
        else {
            throw HubError("\(file.path) has no \(type) block: move the file away and start the hub to make a new one.")
        }
        return String(text[start.lowerBound..<end.upperBound]) + "\n"
    }
}
