import ArgusAuth
import Foundation
import TestSupport
import Testing

@Suite("Refresh tokens: opaque, stored as a hash, rotated, reuse revokes the family")
struct RefreshTokenTests {
    @Test("256 random bits as 43 base64url characters; stored as SHA-256 hex")
    func shape() {
        let tokens = (0..<200).map { _ in RefreshToken.generate() }
        #expect(Set(tokens).count == 200)
        for token in tokens { #expect(RefreshToken.isWellFormed(token), "\(token)") }
        // FIPS 180-2's "abc"
        #expect(RefreshToken.hash("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(!RefreshToken.isWellFormed(String(repeating: "A", count: 42)))
        #expect(!RefreshToken.isWellFormed(String(repeating: "A", count: 42) + "="))
        #expect(!RefreshToken.isWellFormed(String(repeating: "A", count: 42) + "+"))
    }

    static let now = Date(timeIntervalSince1970: 1_795_000_000)

    static func token(
        rotatedSecondsAgo: Double? = nil, successorUsed: Bool = false, revoked: Bool = false,
        expiresIn: TimeInterval = 3600
    ) -> StoredRefreshToken {
        StoredRefreshToken(
            deviceId: "phone-1", familyId: "family-1", issuedAt: now.addingTimeInterval(-60),
            expiresAt: now.addingTimeInterval(expiresIn),
            rotatedAt: rotatedSecondsAgo.map { now.addingTimeInterval(-$0) },
            successorUsed: successorUsed, revoked: revoked)
    }

    @Test("the rotation rule, case by case")
    func decisions() {
        let now = Self.now
        #expect(RefreshDecision.decide(Self.token(), deviceId: "phone-1", now: now) == .rotate)
        #expect(RefreshDecision.decide(nil, deviceId: "phone-1", now: now) == .refuse)
        #expect(RefreshDecision.decide(Self.token(), deviceId: "phone-2", now: now) == .refuse, "another device's")
        #expect(RefreshDecision.decide(Self.token(expiresIn: 0), deviceId: "phone-1", now: now) == .refuse)
        #expect(RefreshDecision.decide(Self.token(revoked: true), deviceId: "phone-1", now: now) == .refuse)
        // a lost response: the same token again within the grace, its successor never used
        #expect(
            RefreshDecision.decide(Self.token(rotatedSecondsAgo: 5), deviceId: "phone-1", now: now)
                == .retryAfterLostResponse)
        // the successor was used: this is someone else holding the old token
        #expect(
            RefreshDecision.decide(Self.token(rotatedSecondsAgo: 5, successorUsed: true), deviceId: "phone-1", now: now)
                == .reuseDetected(familyId: "family-1"))
        #expect(
            RefreshDecision.decide(Self.token(rotatedSecondsAgo: 31), deviceId: "phone-1", now: now)
                == .reuseDetected(familyId: "family-1"))
        // a revoked family stays refused, whatever is presented
        #expect(
            RefreshDecision.decide(Self.token(rotatedSecondsAgo: 5, revoked: true), deviceId: "phone-1", now: now)
                == .refuse)
    }
}
