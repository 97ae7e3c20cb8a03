import Crypto
import DeviceIdentity
public import Foundation

/// An opaque refresh token: 256 random bits, base64url without padding (43 characters). The hub keeps only its
/// SHA-256 (``hash(_:)``), so a copy of the database cannot be replayed.
public enum RefreshToken {
    /// 30 days (seed 004).
    public static let lifetime: TimeInterval = 30 * 24 * 3600
    /// A rotated token presented again within this long is taken for a lost response (the app retries): it gets a
    /// new pair once more, and the unused successor is voided. Later, it is reuse: the device's whole family is
    /// revoked (RFC 9700 §4.14.2).
    public static let reuseGrace: TimeInterval = 30
    public static let length = 43

    /// A new token from the system's CSPRNG.
    public static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        return generate(using: &generator)
    }

    public static func generate(using generator: inout some RandomNumberGenerator) -> String {
        var bytes = [UInt8](repeating: 0, count: 32)
        for index in bytes.indices { bytes[index] = UInt8.random(in: .min ... .max, using: &generator) }
        return Base64URL.encode(bytes)
    }

    /// What the hub stores and looks tokens up by: SHA-256, lowercase hex.
    public static func hash(_ token: String) -> String {
        SHA256.hash(data: Data(token.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// 43 base64url characters (anything else is refused before a lookup).
    public static func isWellFormed(_ token: String) -> Bool {
        token.utf8.count == length && token.utf8.allSatisfy(Base64URL.isAlphabet)
    }
}

/// A stored refresh token, as much as the rotation rule needs.
public struct StoredRefreshToken: Sendable, Hashable {
    public var deviceId: String
    public var familyId: String
    public var issuedAt: Date
    public var expiresAt: Date
    /// When it was exchanged for a new pair (nil: never used).
    public var rotatedAt: Date?
    /// Whether the token it was exchanged for has itself been used (then a retry cannot be a lost response).
    public var successorUsed: Bool
    public var revoked: Bool

    public init(
        deviceId: String, familyId: String, issuedAt: Date, expiresAt: Date, rotatedAt: Date? = nil,
        successorUsed: Bool = false, revoked: Bool = false
    ) {
        self.deviceId = deviceId
        self.familyId = familyId
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.rotatedAt = rotatedAt
        self.successorUsed = successorUsed
        self.revoked = revoked
    }
}

/// The rotation rule for one presented refresh token (the store applies it in one transaction).
public enum RefreshDecision: Sendable, Hashable {
    /// Issue a new pair; this token is used up.
    case rotate
    /// A retry after a lost response: issue a new pair and void the successor nobody has used.
    case retryAfterLostResponse
    /// A used token presented again: revoke every token of the family (and say 401).
    case reuseDetected(familyId: String)
    /// Unknown, expired, revoked, or another device's: 401, nothing changes.
    case refuse

    /// Decides what `token` (nil: no such hash) presented by `deviceId` at `now` leads to.
    public static func decide(_ token: StoredRefreshToken?, deviceId: String, now: Date) -> RefreshDecision {
        guard let token, !token.revoked else { return .refuse }
        // another device's token: never honoured, and it says nothing about the family's safety
        guard ConstantTime.equals(Array(token.deviceId.utf8), Array(deviceId.utf8)) else { return .refuse }
        guard now < token.expiresAt else { return .refuse }
        guard let rotatedAt = token.rotatedAt else { return .rotate }
        if !token.successorUsed, now.timeIntervalSince(rotatedAt) <= RefreshToken.reuseGrace {
            return .retryAfterLostResponse
        }
        return .reuseDetected(familyId: token.familyId)
    }
}

/// base64url without padding (RFC 4648 §5).
public enum Base64URL {
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    static func isAlphabet(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default: false
        }
    }
}
