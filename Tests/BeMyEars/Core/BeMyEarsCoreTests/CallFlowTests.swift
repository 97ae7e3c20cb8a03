import BeMyEarsCore
import BeMyEarsTestSupport
import CanonicalJSON
import Testing

@Suite("Calls: request, ring, accept, relay, busy")
struct CallFlowTests {
    @Test("the whole happy path, message by message")
    func happyPath() async throws {
        let harness = Harness()
        let bob = try await harness.interpreter("bob")
        let carol = try await harness.caller("carol")
        _ = try carol.received()
        let callId = CallID(testNumber: 1)

        await carol.send(.callRequest, to: "Bob")
        #expect(
            try bob.received() == [
                .state(.ringing), .callRequest(callId, from: Username("carol")!, to: Username("bob")!),
            ]
        )
        #expect(try carol.received() == [.callRinging(callId, to: Username("bob")!, ringSeconds: 10), .presence([])])
        #expect(try await harness.interpreterState("bob") == .ringing)

        await bob.send(.callAccept, callId: callId)
        #expect(try bob.received() == [.state(.inCall)])
        #expect(try carol.received() == [.callAccept(callId, from: Username("bob")!, to: Username("carol")!)])
        #expect(try await harness.interpreterState("bob") == .inCall)

        let offer: JSONValue = ["sdp": "v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\n", "type": "offer"]
        await carol.send(.offer, callId: callId, to: "mallory", payload: offer)
        #expect(
            try bob.received() == [
                Envelope(type: .offer, callId: callId.rawValue, from: "carol", to: "bob", payload: offer)
            ]
        )

        let answer: JSONValue = ["sdp": "v=0\r\n", "type": "answer"]
        await bob.send(
            text: #"{"type":"ANSWER","callId":"\#(callId)","from":"carol","payload":{"sdp":"v=0\r\n","type":"answer"}}"#
        )
        let forwarded = try carol.received()
        #expect(
            forwarded == [Envelope(type: .answer, callId: callId.rawValue, from: "bob", to: "carol", payload: answer)],
            "from is the sender's registered name, whatever the client wrote"
        )

        let candidate: JSONValue = [
            "candidate": [
                "candidate": "candidate:1 1 udp 2122260223 192.0.2.7 50000 typ host", "sdpMid": "0", "sdpMLineIndex": 0,
            ]
        ]
        await carol.send(.ice, callId: callId, payload: candidate)
        await bob.send(.ice, callId: callId, payload: candidate)
        #expect(try bob.received().map(\.payload) == [candidate])
        #expect(try carol.received().map(\.payload) == [candidate])

        await bob.send(.videoVisible, callId: callId, payload: ["visible": true])
        #expect(try carol.received().map(\.type) == [.videoVisible])
        let stats: JSONValue = ["rttMs": 41, "packetLoss": 0.5, "fps": 29.97]
        await carol.send(.statsUpdate, callId: callId, payload: stats)
        #expect(
            try bob.received() == [
                Envelope(type: .statsUpdate, callId: callId.rawValue, from: "carol", to: "bob", payload: stats)
            ]
        )

        await carol.send(.hangup, callId: callId)
        #expect(try carol.received() == [.callEnded(callId, reason: .hangup), .presence([Username("bob")!])])
        #expect(try bob.received() == [.callEnded(callId, reason: .hangup), .state(.available)])
        #expect(try await harness.interpreterState("bob") == .available)
    }

    @Test("a connected call has no deadline left and survives any time")
    func connectedCallStays() async throws {
        let harness = Harness()
        let bob = try await harness.interpreter("bob")
        let carol = try await harness.caller("carol")
        let callId = try await harness.connectCall(bob, from: carol)
        await carol.send(.offer, callId: callId, payload: ["sdp": "o"])
        await bob.send(.answer, callId: callId, payload: ["sdp": "a"])
        await bob.send(.videoVisible, callId: callId, payload: ["visible": true])
        for _ in 0..<12 {
            harness.clock.advance(.seconds(10))
            await carol.send(.heartbeat)
            await bob.send(.heartbeat)
            await harness.hub.tick()
        }
        #expect(try await harness.interpreterState("bob") == .inCall)
        #expect(try carol.allReceived().allSatisfy { $0.type != .callEnded })
    }

    @Test("CALL_REQUEST to an interpreter who is not AVAILABLE is BUSY, and nothing reaches the interpreter")
    func busy() async throws {
        let harness = Harness()
        let bob = try await harness.interpreter("bob")
        let offline = try await harness.interpreter("otto", online: false)
        let carol = try await harness.caller("carol")
        let dave = try await harness.caller("dave")
        _ = try await harness.ring(bob, from: carol)
        _ = try dave.received()
        let callId = CallID(testNumber: 1)

        // The interpreter's call (the one that won) rides along; an offline interpreter has none.
        await dave.send(.callRequest, to: "bob")
        #expect(try dave.received() == [.busy(to: Username("bob")!, call: callId)])
        await dave.send(.callRequest, to: "otto")
        #expect(try dave.received() == [.busy(to: Username("otto")!)])
        #expect(try bob.received().isEmpty)
        #expect(try offline.received().isEmpty)

        await bob.send(.callAccept, callId: callId)
        _ = try bob.received()
        await dave.send(.callRequest, to: "bob")
        #expect(try dave.received() == [.busy(to: Username("bob")!, call: callId)], "IN_CALL is busy too")
    }

    @Test(
        "CALL_REQUEST to an unknown user, a caller, or an impossible name is UNKNOWN_USER",
        arguments: ["nobody", "dave", "no one", "x"]
    )
    func unknownUser(target: String) async throws {
        let harness = Harness()
        _ = try await harness.caller("dave")
        let carol = try await harness.caller("carol")
        await carol.send(.callRequest, to: target)
        #expect(try carol.received().map(\.errorCode) == [.unknownUser])
    }

    @Test("CALL_REQUEST without `to` is PROTOCOL_ERROR and the socket stays open")
    func callRequestWithoutTarget() async throws {
        let harness = Harness()
        let carol = try await harness.caller("carol")
        await carol.send(.callRequest)
        #expect(try carol.received().map(\.errorCode) == [.protocolError])
        #expect(carol.closeCode == nil)
    }

    @Test("a caller already ringing or in a call gets BAD_STATE for another CALL_REQUEST")
    func callerAlreadyInCall() async throws {
        let harness = Harness()
        let bob = try await harness.interpreter("bob")
        _ = try await harness.interpreter("amy")
        let carol = try await harness.caller("carol")
        _ = try await harness.ring(bob, from: carol)
        await carol.send(.callRequest, to: "amy")
        #expect(try carol.received().map(\.errorCode) == [.badState])
        #expect(try await harness.interpreterState("amy") == .available)
    }

    @Test("server-generated callIds: UUIDs from the injected generator, lowercase")
    func callIds() async throws {
        let harness = Harness(callIDs: .random)
        let bob = try await harness.interpreter("bob")
        let carol = try await harness.caller("carol")
        let callId = try await harness.ring(bob, from: carol)
        #expect(callId.rawValue == callId.rawValue.lowercased())
        #expect(callId.rawValue.count == 36)
        let version = callId.rawValue[callId.rawValue.index(callId.rawValue.startIndex, offsetBy: 14)]
        #expect(version == "4")
    }
}
