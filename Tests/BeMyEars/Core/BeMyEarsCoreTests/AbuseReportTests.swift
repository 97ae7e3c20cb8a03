import BeMyEarsCore
import BeMyEarsTestSupport
import CanonicalJSON
import Testing

@Suite("REPORT_ABUSE during a call and up to 5 minutes after")
struct AbuseReportTests {
    @Test("a party's report is answered REPORT_RECEIVED and logged with the offender's identity only")
    func duringCall() async throws {
        let harness = Harness()
        let bob = try await harness.interpreter("bob")
        let carol = try await harness.caller("carol")
        let callId = try await harness.connectCall(bob, from: carol)
        await carol.send(.reportAbuse, callId: callId, payload: ["reason": "insulted me, call me at 555-0100"])
        #expect(try carol.received() == [.reportReceived(callId)])
        #expect(try bob.received().isEmpty, "the other party is not told")
        let record = try #require(harness.outbound.logs.first { $0.event == .abuseReported })
        #expect(record.offender == Username("bob"))
        #expect(record.callId == callId)
        #expect(record.sessionId == carol.id)
        #expect(record.role == .caller)
        #expect(!record.line.contains("555-0100"))
        #expect(!record.line.contains("carol"))
    }

    @Test("accepted up to 5 minutes after the call ended; then UNKNOWN_CALL")
    func window() async throws {
        let harness = Harness()
        let bob = try await harness.interpreter("bob")
        let carol = try await harness.caller("carol")
        let callId = try await harness.connectCall(bob, from: carol)
        await carol.send(.hangup, callId: callId)
        _ = try carol.received()
        _ = try bob.received()

        harness.clock.advance(.seconds(299))
        await bob.send(.reportAbuse, callId: callId, payload: ["reason": "x"])
        #expect(try bob.received() == [.reportReceived(callId)])
        #expect(harness.outbound.logs.last { $0.event == .abuseReported }?.offender == Username("carol"))

        harness.clock.advance(.seconds(2))
        await bob.send(.reportAbuse, callId: callId)
        let refusal = try #require(try bob.received().first)
        #expect(refusal.errorCode == .unknownCall)
        #expect(refusal.callId == callId.rawValue)
    }

    @Test("a client that reconnected with the same username can still report the call")
    func afterReconnect() async throws {
        let harness = Harness()
        let bob = try await harness.interpreter("bob")
        let carol = try await harness.caller("carol")
        let callId = try await harness.connectCall(bob, from: carol)
        await carol.disconnect()
        let again = try await harness.caller("carol")
        await again.send(.reportAbuse, callId: callId, payload: ["reason": "x"])
        #expect(try again.received() == [.reportReceived(callId)])
    }

    @Test("somebody else's call is NOT_A_PARTY; an unknown call UNKNOWN_CALL")
    func refused() async throws {
        let harness = Harness()
        let bob = try await harness.interpreter("bob")
        let carol = try await harness.caller("carol")
        let mallory = try await harness.caller("mallory")
        let callId = try await harness.connectCall(bob, from: carol)
        _ = try mallory.received()
        await mallory.send(.reportAbuse, callId: callId)
        await mallory.send(.reportAbuse, callId: CallID(testNumber: 99))
        #expect(try mallory.received().map(\.errorCode) == [.notAParty, .unknownCall])
        #expect(harness.outbound.logs.filter { $0.event == .abuseReported }.isEmpty)
    }

    @Test("ended calls are removed from the store once the window has passed")
    func pruned() async throws {
        let harness = Harness()
        let bob = try await harness.interpreter("bob")
        let carol = try await harness.caller("carol")
        let callId = try await harness.connectCall(bob, from: carol)
        await carol.send(.hangup, callId: callId)
        for _ in 0..<7 {
            harness.clock.advance(.seconds(60))
            await harness.hub.tick()
        }
        #expect(try await harness.store.call(callId) == nil)
    }
}
