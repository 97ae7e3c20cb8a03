public import ArgusTokens
public import Foundation
import JWTKit

/// What Argus's tests share: a fixed moment to start from and a hub signing key.
public enum ArgusFixtures {
    /// 2026-11-17 22:13:20 UTC: every test's clock starts here.
    public static let epoch = Date(timeIntervalSince1970: 1_795_000_000)

    /// An access-token signer and checker with a new Ed25519 key.
    public static func accessTokens(keyId: String = "hub-key-1") async throws -> AccessTokens {
        await AccessTokens(privateKey: try EdDSA.PrivateKey(curve: .ed25519), keyId: keyId)
    }
}
