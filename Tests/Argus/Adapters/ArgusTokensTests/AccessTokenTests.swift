import ArgusAuth
import ArgusTestSupport
import ArgusTokens
import Crypto
import Foundation
import JWTKit
import Testing

/// Every way an access token can be forged or misused is refused, and the reason is the right one.
@Suite("Access tokens: EdDSA with a kid, 1 h, for one device; every forgery refused")
struct AccessTokenTests {
    let now = ArgusFixtures.epoch

    @Test("a token the hub issued holds for an hour, names its device, and is refused once expired")
    func roundTrip() async throws {
        let tokens = try await ArgusFixtures.accessTokens()
        let token = try await tokens.issue(deviceId: "phone-1", now: now)
        let claims = try await tokens.verify(token, now: now.addingTimeInterval(3599))
        #expect(claims.deviceId == "phone-1" && claims.sub.value == "phone-1")
        #expect(claims.aud.value == ["argus-mobile"] && claims.iss.value == "argus-hub")
        let header = try Self.json(String(token.split(separator: ".")[0]))
        #expect(header["alg"] as? String == "EdDSA" && header["kid"] as? String == "hub-key-1")
        await #expect(throws: AccessTokenError.expired) {
            try await tokens.verify(token, now: now.addingTimeInterval(3600))
        }
    }

    @Test("alg none, HS256 keyed with the public key, RS256, a foreign kid, a changed payload: all refused")
    func forgeries() async throws {
        let key = try EdDSA.PrivateKey(curve: .ed25519)
        let tokens = await AccessTokens(privateKey: key, keyId: "hub-key-1")
        let genuine = try await tokens.issue(deviceId: "phone-1", now: now)
        let parts = genuine.split(separator: ".").map(String.init)
        let payload = parts[1]

        let none = Self.encode(#"{"alg":"none","typ":"JWT","kid":"hub-key-1"}"#) + "." + payload + "."
        await #expect(throws: AccessTokenError.wrongAlgorithm("none")) { try await tokens.verify(none, now: now) }
        let noAlg = Self.encode(#"{"typ":"JWT","kid":"hub-key-1"}"#) + "." + payload + "." + parts[2]
        await #expect(throws: AccessTokenError.wrongAlgorithm("none")) { try await tokens.verify(noAlg, now: now) }

        // the classic confusion: HMAC with the (public) verification key as its secret
        let hsHeader = Self.encode(#"{"alg":"HS256","typ":"JWT","kid":"hub-key-1"}"#)
        let publicKey = key.publicKey.rawRepresentation
        let mac = HMAC<SHA256>.authenticationCode(
            for: Data((hsHeader + "." + payload).utf8), using: SymmetricKey(data: publicKey))
        let hs = hsHeader + "." + payload + "." + Base64URL.encode(Data(mac))
        await #expect(throws: AccessTokenError.wrongAlgorithm("HS256")) { try await tokens.verify(hs, now: now) }
        let rs = Self.encode(#"{"alg":"RS256","typ":"JWT","kid":"hub-key-1"}"#) + "." + payload + "." + parts[2]
        await #expect(throws: AccessTokenError.wrongAlgorithm("RS256")) { try await tokens.verify(rs, now: now) }

        let foreignKid = Self.encode(#"{"alg":"EdDSA","typ":"JWT","kid":"other"}"#) + "." + payload + "." + parts[2]
        await #expect(throws: AccessTokenError.unknownKey) { try await tokens.verify(foreignKid, now: now) }

        // another device's name put into a genuine token's payload
        var claims = try Self.json(payload)
        claims["device_id"] = "phone-2"
        claims["sub"] = "phone-2"
        let changed = try JSONSerialization.data(withJSONObject: claims)
        let tampered = parts[0] + "." + Base64URL.encode(changed) + "." + parts[2]
        await #expect(throws: AccessTokenError.badSignature) { try await tokens.verify(tampered, now: now) }

        // another hub's key under the same kid
        let otherHub = try await ArgusFixtures.accessTokens(keyId: "hub-key-1")
        let foreign = try await otherHub.issue(deviceId: "phone-1", now: now)
        await #expect(throws: AccessTokenError.badSignature) { try await tokens.verify(foreign, now: now) }

        for garbage in ["", "a.b", "a.b.c.d", String(repeating: "x", count: 5000), "...."] {
            await #expect(throws: AccessTokenError.self) { try await tokens.verify(garbage, now: now) }
        }
    }

    @Test("signed with the hub's key but for another audience, issuer or subject: refused")
    func wrongClaims() async throws {
        let key = try EdDSA.PrivateKey(curve: .ed25519)
        let tokens = await AccessTokens(privateKey: key, keyId: "hub-key-1")
        let signer = JWTKeyCollection()
        await signer.add(eddsa: key, kid: "hub-key-1")
        func signed(_ change: (inout AccessClaims) -> Void) async throws -> String {
            var claims = AccessClaims(deviceId: "phone-1", issuedAt: now)
            change(&claims)
            return try await signer.sign(claims, kid: "hub-key-1")
        }
        let audience = try await signed { $0.aud = AudienceClaim(value: ["argus-admin"]) }
        await #expect(throws: AccessTokenError.wrongAudience) { try await tokens.verify(audience, now: now) }
        let issuer = try await signed { $0.iss = IssuerClaim(value: "someone") }
        await #expect(throws: AccessTokenError.wrongIssuer) { try await tokens.verify(issuer, now: now) }
        let subject = try await signed { $0.sub = SubjectClaim(value: "phone-2") }
        await #expect(throws: AccessTokenError.wrongSubject) { try await tokens.verify(subject, now: now) }
    }

    static func encode(_ text: String) -> String { Base64URL.encode(Data(text.utf8)) }

    static func json(_ part: String) throws -> [String: Any] {
        var text = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        text += String(repeating: "=", count: (4 - text.count % 4) % 4)
        let data = try #require(Data(base64Encoded: text))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }
}
