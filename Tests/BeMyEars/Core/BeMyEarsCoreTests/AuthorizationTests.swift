import BeMyEarsCore
import CanonicalJSON
import Testing

/// Seed §9.2: only the two parties exchange signaling for a callId; unknown or ended callIds, role violations
/// and messages the call's state does not allow are refused with ERROR, never forwarded.
@Suite("Authorization of call messages")
struct AuthorizationTests {
    /// A ringing call carol → bob, plus a bystander caller and interpreter.
    struct Setup {
        let harness = Harness()
        let bob: TestClient
        let carol: TestClient
        let mallory: TestClient
        let ivan: TestClient
        let callId: CallID

        init() async throws {
            bob = try await harness.interpreter("bob")
            ivan = try await harness.interpreter("ivan")
            carol = try await harness.caller("carol")
            mallory = try await harness.caller("mallory")
            callId = try await harness.ring(bob, from: carol)
            _ = try mallory.received()
        }

        /// Every party's and bystander's new messages, to prove nothing was forwarded.
        func nothingForwarded() throws -> Bool {
            try [bob, carol, ivan].allSatisfy { try $0.received().isEmpty }
        }
    }

    @Test(
        "a live callId from a session that is not a party is NOT_A_PARTY, with the callId",
        arguments: [MessageType.offer, .answer, .ice, .hangup, .videoVisible, .statsUpdate]
    )
    func notAParty(type: MessageType) async throws {
        let setup = try await Setup()
        await setup.bob.send(.callAccept, callId: setup.callId)
        _ = try setup.bob.received()
        _ = try setup.carol.received()
        await setup.mallory.send(type, callId: setup.callId, payload: ["sdp": "v=0"])
        let refusal = try #require(try setup.mallory.received().first)
        #expect(refusal.errorCode == .notAParty)
        #expect(refusal.callId == setup.callId.rawValue)
        #expect(try setup.nothingForwarded())
    }

    @Test("another interpreter cannot accept or decline someone else's call: NOT_A_PARTY")
    func otherInterpreter() async throws {
        let setup = try await Setup()
        await setup.ivan.send(.callAccept, callId: setup.callId)
        await setup.ivan.send(.callDecline, callId: setup.callId)
        #expect(try setup.ivan.received().map(\.errorCode) == [.notAParty, .notAParty])
        #expect(try await setup.harness.interpreterState("bob") == .ringing)
        #expect(try setup.nothingForwarded())
    }

    @Test(
        "an unknown, malformed or ended callId is UNKNOWN_CALL",
        arguments: ["00000000-0000-4000-8000-0000000000ff", "not-a-uuid", "", "ended"]
    )
    func unknownCall(callId: String) async throws {
        let setup = try await Setup()
        var target = callId
        if callId == "ended" {
            await setup.carol.send(.hangup, callId: setup.callId)
            _ = try setup.carol.received()
            _ = try setup.bob.received()
            target = setup.callId.rawValue
        }
        for type in [MessageType.offer, .ice, .hangup, .statsUpdate] {
            await setup.carol.send(text: EnvelopeCodec.encode(Envelope(type: type, callId: target, payload: ["x": 1])))
        }
        await setup.bob.send(text: EnvelopeCodec.encode(Envelope(type: .callAccept, callId: target)))
        let refusals = try setup.carol.received() + setup.bob.received()
        #expect(refusals.map(\.errorCode) == Array(repeating: .unknownCall, count: 5))
        #expect(refusals.allSatisfy { $0.callId == target })
    }

    @Test("a message without its callId is PROTOCOL_ERROR and the socket stays open")
    func missingCallId() async throws {
        let setup = try await Setup()
        await setup.bob.send(.callAccept)
        await setup.carol.send(.hangup)
        #expect(try setup.bob.received().map(\.errorCode) == [.protocolError])
        #expect(try setup.carol.received().map(\.errorCode) == [.protocolError])
        #expect(setup.bob.closeCode == nil)
    }

    @Test(
        "a type the sender's role may not send is ROLE_FORBIDDEN",
        arguments: [
            ("interpreter", MessageType.callRequest), ("caller", .callAccept), ("caller", .callDecline),
            ("caller", .setState), ("caller", .callEnded), ("interpreter", .presence), ("caller", .busy),
            ("interpreter", .registered), ("caller", .error), ("interpreter", .heartbeatAck),
            ("caller", .callRinging), ("interpreter", .reportReceived), ("caller", .state),
        ]
    )
    func roleForbidden(role: String, type: MessageType) async throws {
        let setup = try await Setup()
        let sender = role == "caller" ? setup.carol : setup.bob
        _ = try sender.received()
        await sender.send(type, callId: setup.callId, to: "ivan", payload: ["state": "AVAILABLE"])
        let refusal = try #require(try sender.received().first)
        #expect(refusal.errorCode == .roleForbidden)
        #expect(try setup.nothingForwarded())
        #expect(try await setup.harness.interpreterState("bob") == .ringing)
    }

    @Test(
        "signaling before CALL_ACCEPT is BAD_STATE and not forwarded",
        arguments: [MessageType.offer, .answer, .ice, .videoVisible, .statsUpdate]
    )
    func beforeAccept(type: MessageType) async throws {
        let setup = try await Setup()
        await setup.carol.send(type, callId: setup.callId, payload: ["sdp": "v=0"])
        await setup.bob.send(type, callId: setup.callId, payload: ["sdp": "v=0"])
        #expect(try setup.carol.received().map(\.errorCode) == [.badState])
        #expect(try setup.bob.received().map(\.errorCode) == [.badState])
    }

    @Test("CALL_ACCEPT or CALL_DECLINE of an accepted call is BAD_STATE")
    func acceptTwice() async throws {
        let setup = try await Setup()
        await setup.bob.send(.callAccept, callId: setup.callId)
        _ = try setup.bob.received()
        _ = try setup.carol.received()
        await setup.bob.send(.callAccept, callId: setup.callId)
        await setup.bob.send(.callDecline, callId: setup.callId)
        #expect(try setup.bob.received().map(\.errorCode) == [.badState, .badState])
        #expect(try setup.carol.received().isEmpty)
        #expect(try await setup.harness.interpreterState("bob") == .inCall)
    }

    @Test("ERROR messages say what to do, and refusals are logged without usernames or payloads")
    func refusalMessages() async throws {
        let setup = try await Setup()
        await setup.mallory.send(.hangup, callId: setup.callId)
        let refusal = try #require(try setup.mallory.received().first)
        #expect(refusal.payload?["message"]?.stringValue?.isEmpty == false)
        let record = try #require(setup.harness.outbound.logs.last { $0.event == .messageRefused(.notAParty) })
        #expect(record.callId == setup.callId)
        #expect(record.sessionId == setup.mallory.id)
        #expect(!record.line.contains("mallory"))
    }
}
