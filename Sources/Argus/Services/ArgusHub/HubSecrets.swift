import Crypto
import DeviceIdentityStore
public import Foundation
public import JWTKit

/// The hub's two secrets in its data directory, each 0600: the Ed25519 key that signs access tokens
/// (`signing-key.pem`) and the owner's admin key (`admin-token`, 256 bits in hex) that `createPairingCode` needs.
public struct HubSecrets: Sendable {
    public let signingKey: EdDSA.PrivateKey
    /// The `kid` of the tokens: the first 16 hex digits of the public key's SHA-256.
    public let keyId: String
    public let adminKey: String

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
        let digest = SHA256.hash(data: key.publicKey.rawRepresentation).map { String(format: "%02x", $0) }.joined()
        return HubSecrets(
            signingKey: key, keyId: String(digest.prefix(16)),
            adminKey: admin.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
