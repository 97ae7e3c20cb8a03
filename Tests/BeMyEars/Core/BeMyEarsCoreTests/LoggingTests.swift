import BeMyEarsCore
import BeMyEarsTestSupport
import CanonicalJSON
import Foundation
import Testing

/// Seed §18: only timestamp, event type, callId, sessionId, role, an abuse report's offender and periodic
/// statistics are logged; never SDP, ICE candidates, media statistics tied to identity, or usernames.
@Suite("Server logs obey seed §18")
struct LoggingTests {
    static let allowedFields: Set<String> = [
        "event", "code", "state", "reason", "closeCode", "callId", "sessionId", "role", "offender", "sessions",
        "callers", "interpreters", "partiesInCalls", "callsStarted", "callsEnded", "abuseReports",
    ]

    @Test("a whole call's logs hold no SDP, ICE, stats or usernames, and only allowed fields")
    func privacy() async throws {
        let harness = Harness()
        let bob = try await harness.interpreter("bob.secret")
        let carol = try await harness.caller("carol.secret")
        let callId = try await harness.connectCall(bob, from: carol)
        await carol.send(.offer, callId: callId, payload: ["sdp": "v=0 SDPMARKER"])
        await bob.send(.answer, callId: callId, payload: ["sdp": "v=0 SDPMARKER"])
        await carol.send(
            .ice,
            callId: callId,
            payload: ["candidate": "candidate:ICEMARKER 1 udp 1 192.0.2.9 9 typ host"]
        )
        await bob.send(.statsUpdate, callId: callId, payload: ["rttMs": 123_456_789])
        await carol.send(.videoVisible, callId: callId, payload: ["visible": true])
        await carol.send(text: #"{"type":"OFFER","callId":"not-a-call","payload":{"sdp":"SDPMARKER"}}"#)
        await carol.send(.hangup, callId: callId)
        harness.clock.advance(.seconds(300))
        await harness.hub.tick()

        let logs = harness.outbound.logs
        #expect(logs.count > 5)
        for record in logs {
            for marker in ["SDPMARKER", "ICEMARKER", "192.0.2.9", "123456789", "secret"] {
                #expect(!record.line.contains(marker), "\(record.line)")
            }
            for field in record.fields {
                #expect(Self.allowedFields.contains(field.name), "\(field.name)")
            }
            #expect(record.offender == nil)
        }
        #expect(logs.contains { $0.event == .callEnded(.hangup) && $0.callId == callId })
        #expect(logs.contains { $0.event == .callAccepted && $0.callId == callId })
    }

    @Test("timestamps are YYYY-MM-DD HH:MM:SS (UTC)")
    func timestamp() async throws {
        let harness = Harness()
        _ = try await harness.caller("carol")
        let record = try #require(harness.outbound.logs.first)
        #expect(record.formattedTimestamp == "2025-06-15 15:06:40")
        #expect(record.line.hasPrefix("2025-06-15 15:06:40 event=session_opened sessionId="))
    }

    @Test("user statistics are logged every 5 minutes, as counts")
    func statistics() async throws {
        let harness = Harness()
        let bob = try await harness.interpreter("bob")
        let carol = try await harness.caller("carol")
        _ = try await harness.ring(bob, from: carol)
        for _ in 0..<29 {
            harness.clock.advance(.seconds(10))
            await bob.send(.heartbeat)
            await carol.send(.heartbeat)
            await harness.hub.tick()
        }
        #expect(!harness.outbound.logs.contains { if case .statistics = $0.event { true } else { false } })
        harness.clock.advance(.seconds(10))
        await bob.send(.heartbeat)
        await carol.send(.heartbeat)
        await harness.hub.tick()
        let reports = harness.outbound.logs.compactMap { record -> SignalingStatistics? in
            if case .statistics(let statistics) = record.event { return statistics }
            return nil
        }
        #expect(
            reports == [
                SignalingStatistics(
                    sessions: 2,
                    callers: 1,
                    interpreters: 1,
                    partiesInCalls: 0,
                    callsStarted: 1,
                    callsEnded: 1
                )
            ]
        )
    }
}
