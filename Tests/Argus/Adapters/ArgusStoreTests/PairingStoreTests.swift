import ArgusAuth
import ArgusStore
import ArgusTestSupport
import Foundation
import TestSupport
import Testing

@Suite("The hub's database: codes used once, tokens rotated, families revoked, devices revoked")
struct PairingStoreTests {
    let now = ArgusFixtures.epoch
    let phone = DeviceRequest(deviceId: "phone-1", deviceName: "Ana's iPhone", deviceType: "iphone")

    @Test("two simultaneous verifications of one code: exactly one is paired, the other told the code is invalid")
    func race() async throws {
        let directory = try Subprocess.temporaryDirectory("argus-race")
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try ArgusDatabase(directory: directory)
        // A second store object of the same file (it shares the process's one pool, as the hub's owner's page does).
        let second = try ArgusDatabase(directory: directory)
        for round in 0..<20 {
            let (code, _) = try first.createPairingCode(now: now)
            async let a = Task.detached {
                try first.verifyPairingCode(
                    code, device: DeviceRequest(deviceId: "a-\(round)", deviceName: "A", deviceType: "iphone"),
                    now: self.now)
            }.value
            async let b = Task.detached {
                try second.verifyPairingCode(
                    code, device: DeviceRequest(deviceId: "b-\(round)", deviceName: "B", deviceType: "ipad"),
                    now: self.now)
            }.value
            let outcomes = try await [a, b]
            let paired = outcomes.filter { if case .paired = $0 { true } else { false } }
            #expect(paired.count == 1 && outcomes.contains(.invalid(voided: 0)), "round \(round): \(outcomes)")
        }
        let mode =
            try FileManager.default.attributesOfItem(
                atPath: directory.appendingPathComponent("argus.sqlite").path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test("a code expires after 5 minutes and is single use")
    func expiry() throws {
        let database = try ArgusDatabase.inMemory()
        let (code, expiresAt) = try database.createPairingCode(now: now)
        #expect(expiresAt == now.addingTimeInterval(300))
        #expect(try database.verifyPairingCode(code, device: phone, now: now.addingTimeInterval(300)) == .expired)
        let (fresh, _) = try database.createPairingCode(now: now)
        guard case .paired = try database.verifyPairingCode(fresh, device: phone, now: now.addingTimeInterval(299))
        else {
            Issue.record("a live code was refused")
            return
        }
        #expect(
            try database.verifyPairingCode(fresh, device: phone, now: now.addingTimeInterval(299))
                == .invalid(voided: 0),
            "a used code is invalid (the spec's pairing_code_invalid), not expired")
    }

    @Test("five wrong guesses void the live code: the right one is refused after them")
    func bruteForce() throws {
        let database = try ArgusDatabase.inMemory()
        let (code, _) = try database.createPairingCode(now: now)
        let wrong = (0..<1_000_000).lazy.map { String(format: "%06d", $0) }.filter { $0 != code }.prefix(5)
        var voided = 0
        for guess in wrong {
            guard case .invalid(let count) = try database.verifyPairingCode(guess, device: phone, now: now) else {
                Issue.record("a wrong guess was not refused")
                return
            }
            voided += count
        }
        #expect(voided == 1, "the fifth wrong guess voids the code")
        #expect(try database.verifyPairingCode(code, device: phone, now: now) == .invalid(voided: 0), "void: invalid")
        #expect(try database.verifyPairingCode("12345", device: phone, now: now) == .invalid(voided: 0))
    }

    @Test("refresh: rotated on every use; a lost response may retry once; reuse unpairs the device")
    func rotation() throws {
        let database = try ArgusDatabase.inMemory()
        let (code, _) = try database.createPairingCode(now: now)
        guard case .paired(let first) = try database.verifyPairingCode(code, device: phone, now: now) else {
            Issue.record("not paired")
            return
        }
        #expect(try database.refresh(first, deviceId: "phone-2", now: now) == .refused, "another device")
        guard case .rotated(let second) = try database.refresh(first, deviceId: "phone-1", now: now) else {
            Issue.record("not rotated")
            return
        }
        // the answer was lost: the app retries with the first token within 30 s
        guard
            case .rotated(let third) = try database.refresh(first, deviceId: "phone-1", now: now.addingTimeInterval(5))
        else {
            Issue.record("a retry after a lost response was refused")
            return
        }
        #expect(try database.refresh(second, deviceId: "phone-1", now: now) == .refused, "the lost one is void")
        guard
            case .rotated(let fourth) = try database.refresh(third, deviceId: "phone-1", now: now.addingTimeInterval(6))
        else {
            Issue.record("the retry's token did not rotate")
            return
        }
        // someone replays the third token later: every token goes, including the current one, and the device
        // (so its access tokens too) is no longer paired
        #expect(try database.activeDevice("phone-1") != nil)
        #expect(try database.refresh(third, deviceId: "phone-1", now: now.addingTimeInterval(60)) == .reuseDetected)
        #expect(try database.activeDevice("phone-1") == nil, "reuse unpairs the device: its access tokens stop")
        #expect(try database.devices().first { $0.deviceId == "phone-1" }?.isActive == false)
        #expect(try database.refresh(fourth, deviceId: "phone-1", now: now.addingTimeInterval(61)) == .refused)
        #expect(try database.refresh(first, deviceId: "phone-1", now: now.addingTimeInterval(62)) == .refused)
        // pairing again starts a new family
        let (again, _) = try database.createPairingCode(now: now)
        guard case .paired(let fresh) = try database.verifyPairingCode(again, device: phone, now: now) else {
            Issue.record("not paired again")
            return
        }
        guard case .rotated = try database.refresh(fresh, deviceId: "phone-1", now: now) else {
            Issue.record("the new family does not rotate")
            return
        }
        // a used token past its 30 days is simply refused (nothing left to protect)
        #expect(
            try database.refresh(fresh, deviceId: "phone-1", now: now.addingTimeInterval(RefreshToken.lifetime))
                == .refused)
    }

    @Test("a refresh token ends after 30 days; a revoked device can neither refresh nor act")
    func revoke() throws {
        let database = try ArgusDatabase.inMemory()
        let (code, _) = try database.createPairingCode(now: now)
        guard case .paired(let token) = try database.verifyPairingCode(code, device: phone, now: now) else {
            Issue.record("not paired")
            return
        }
        #expect(try database.refresh(token, deviceId: "phone-1", now: now.addingTimeInterval(30 * 86_400)) == .refused)
        #expect(try database.activeDevice("phone-1")?.deviceName == "Ana's iPhone")
        #expect(try database.setPushToken(String(repeating: "ab", count: 32), deviceId: "phone-1"))
        #expect(try database.revokeDevice("phone-1", now: now))
        #expect(try database.activeDevice("phone-1") == nil)
        #expect(try database.refresh(token, deviceId: "phone-1", now: now) == .refused)
        #expect(try database.pushTargets().isEmpty)
        #expect(try !database.revokeDevice("phone-1", now: now), "already revoked")
        #expect(try database.devices().map(\.isActive) == [false])
    }
}
