public import Foundation
public import JWTKit

/// The claims of an access token: who issued it (the hub), for whom (the mobile API), which device, and when it
/// ends (1 h).
public struct AccessClaims: JWTPayload, Equatable {
    public static let issuer = "argus-hub"
    public static let audience = "argus-mobile"
    /// 1 hour (seed 004).
    public static let lifetime: TimeInterval = 3600

    public var iss: IssuerClaim
    public var aud: AudienceClaim
    public var sub: SubjectClaim
    public var deviceId: String
    public var iat: IssuedAtClaim
    public var exp: ExpirationClaim
    public var jti: IDClaim

    enum CodingKeys: String, CodingKey {
        case iss, aud, sub, iat, exp, jti
        case deviceId = "device_id"
    }

    public init(deviceId: String, issuedAt: Date, id: String = UUID().uuidString.lowercased()) {
        // NumericDate in whole seconds (RFC 7519 §2), as every client library expects
        let issuedAt = Date(timeIntervalSince1970: issuedAt.timeIntervalSince1970.rounded(.down))
        iss = IssuerClaim(value: Self.issuer)
        aud = AudienceClaim(value: [Self.audience])
        sub = SubjectClaim(value: deviceId)
        self.deviceId = deviceId
        iat = IssuedAtClaim(value: issuedAt)
        exp = ExpirationClaim(value: issuedAt.addingTimeInterval(Self.lifetime))
        jti = IDClaim(value: id)
    }

    /// Nothing here: JWTKit calls this after the signature held, and ``AccessTokens/verify(_:now:)`` then runs
    /// ``check(now:)`` at the time it is given (no clock is read in this module).
    public func verify(using _: some JWTAlgorithm) async throws {}

    /// Signature aside, what makes a token acceptable at `now`: issuer, audience, not expired, the subject is the
    /// device.
    public func check(now: Date) throws(AccessTokenError) {
        guard iss.value == Self.issuer else { throw AccessTokenError.wrongIssuer }
        guard aud.value == [Self.audience] else { throw AccessTokenError.wrongAudience }
        guard exp.value > now else { throw AccessTokenError.expired }
        guard sub.value == deviceId, !deviceId.isEmpty else { throw AccessTokenError.wrongSubject }
    }
}

/// Why an access token was refused (the API says 401 for all of them; the reason is for logs and tests).
public enum AccessTokenError: Error, Equatable, Sendable {
    case malformed
    case wrongAlgorithm(String)
    case unknownKey
    case badSignature
    case wrongIssuer
    case wrongAudience
    case expired
    case wrongSubject
}

/// Signs and checks access tokens with the hub's Ed25519 key (`alg` EdDSA, `kid` the key's id). Nothing but that
/// algorithm and that key is accepted: `alg: none`, HS256 made with the public key as a secret, RS256 and a
/// foreign `kid` are refused before any signature check.
public actor AccessTokens {
    public let keyId: String
    private let keys: JWTKeyCollection

    /// - Parameters:
    ///   - privateKey: The hub's signing key (kept 0600 in its data directory).
    ///   - keyId: Its id, sent as `kid` (e.g. the first 16 hex digits of the public key's SHA-256).
    public init(privateKey: EdDSA.PrivateKey, keyId: String) async {
        self.keyId = keyId
        keys = JWTKeyCollection()
        await keys.add(eddsa: privateKey, kid: JWKIdentifier(string: keyId))
    }

    /// A signed token for `deviceId`, valid ``AccessClaims/lifetime`` from `now`.
    public func issue(deviceId: String, now: Date) async throws -> String {
        try await keys.sign(AccessClaims(deviceId: deviceId, issuedAt: now), kid: JWKIdentifier(string: keyId))
    }

    /// The claims of `token` once its header, signature, issuer, audience and expiry hold at `now`.
    public func verify(_ token: String, now: Date) async throws(AccessTokenError) -> AccessClaims {
        guard token.utf8.count <= 4096 else { throw .malformed }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let header = Self.header(parts[0]) else { throw .malformed }
        guard header.alg == "EdDSA" else { throw .wrongAlgorithm(header.alg ?? "none") }
        guard header.kid == keyId else { throw .unknownKey }
        let claims: AccessClaims
        do {
            claims = try await keys.verify(token, as: AccessClaims.self)
        } catch {
            throw .badSignature
        }
        try claims.check(now: now)
        return claims
    }

    private struct Header: Decodable {
        var alg: String?
        var kid: String?
        var typ: String?
    }

    private static func header(_ part: Substring) -> Header? {
        var text = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        text += String(repeating: "=", count: (4 - text.count % 4) % 4)
        guard let data = Data(base64Encoded: text) else { return nil }
        return try? JSONDecoder().decode(Header.self, from: data)
    }
}
