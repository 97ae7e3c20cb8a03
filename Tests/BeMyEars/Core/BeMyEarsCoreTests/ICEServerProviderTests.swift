import BeMyEarsCore
import BeMyEarsTestSupport
import CanonicalJSON
import Foundation
import Testing

@Suite("REGISTERED's iceServers from an ICEServerProvider")
struct ICEServerProviderTests {
    @Test("each REGISTERED asks the provider with its own session and the hub's clock (expiring TURN credentials)")
    func perRegistration() async throws {
        let clock = ManualClock()
        let outbound = RecordingOutbound()
        let provider = ICEServerProvider { session, now in
            [
                ICEServer(
                    urls: ["turn:t:3478"], username: "\(Int(now.timeIntervalSince1970)):\(session)", credential: "c")
            ]
        }
        let hub = SignalingHub(store: InMemorySignalingStore(), outbound: outbound, clock: clock, iceServers: provider)
        var usernames: [String] = []
        for name in ["ivy", "cal"] {
            let client = TestClient(id: .random(), hub: hub, outbound: outbound)
            await hub.connect(client.id)
            await client.send(.register, payload: ["username": .string(name), "role": "interpreter"])
            let expected = provider.iceServers(for: client.id, at: clock.now)
            #expect(expected[0].username == "\(Int(clock.now.timeIntervalSince1970)):\(client.id)")
            #expect(
                try client.received().first
                    == .registered(
                        username: Username(name)!,
                        role: .interpreter,
                        heartbeatIntervalSeconds: 15,
                        presenceTTLSeconds: 20,
                        iceServers: expected
                    )
            )
            usernames.append(expected[0].username ?? "")
        }
        #expect(usernames[0] != usernames[1])
    }

    @Test("without a provider, the configuration's fixed list is used")
    func fixedByDefault() {
        let servers = [ICEServer(urls: ["stun:s:3478"])]
        #expect(ICEServerProvider.fixed(servers).iceServers(for: .random(), at: Date()) == servers)
    }

    /// TURN credentials as the server mints them: `expiry:session`, so a test sees whose and when.
    static let minting = ICEServerProvider { session, now in
        [ICEServer(urls: ["turn:t:3478"], username: "\(Int(now.timeIntervalSince1970)):\(session)", credential: "c")]
    }

    @Test("expiring servers are minted afresh for each call: CALL_RINGING and CALL_REQUEST carry the party's own")
    func perCall() async throws {
        let harness = Harness(iceServers: Self.minting)
        let ivy = try await harness.interpreter("ivy")
        let cal = try await harness.caller("cal")
        harness.clock.advance(.seconds(7200))  // Two hours after REGISTERED: its credentials are long spent.
        await cal.send(.callRequest, to: "ivy")
        let ringing = try #require(try cal.received().first { $0.type == .callRinging })
        let request = try #require(try ivy.received().first { $0.type == .callRequest })
        let now = harness.clock.now
        #expect(ringing.payload?["ringSec"] == 10)
        #expect(
            ringing.payload?["iceServers"] == .array(Self.minting.iceServers(for: cal.id, at: now).map(\.jsonValue)))
        #expect(
            request.payload?["iceServers"] == .array(Self.minting.iceServers(for: ivy.id, at: now).map(\.jsonValue)))
    }

    @Test("a fixed list is REGISTERED's alone: CALL_RINGING and CALL_REQUEST stay as the protocol shows them")
    func fixedNotRepeated() async throws {
        let harness = Harness(iceServers: .fixed([ICEServer(urls: ["stun:s:3478"])]))
        let ivy = try await harness.interpreter("ivy")
        let cal = try await harness.caller("cal")
        await cal.send(.callRequest, to: "ivy")
        #expect(try cal.received().first { $0.type == .callRinging }?.payload == ["ringSec": 10])
        #expect(try ivy.received().first { $0.type == .callRequest }?.payload == nil)
    }

    @Test("ICE_SERVERS renews a party's servers during the call; others get NOT_A_PARTY, an ended call UNKNOWN_CALL")
    func renewal() async throws {
        let harness = Harness(iceServers: Self.minting)
        let ivy = try await harness.interpreter("ivy")
        let cal = try await harness.caller("cal")
        let eve = try await harness.caller("eve")
        await cal.send(.callRequest, to: "ivy")
        let callId = try #require(try cal.received().first { $0.type == .callRinging }?.callId.flatMap(CallID.init))
        _ = try ivy.received()
        await ivy.send(.callAccept, callId: callId)
        _ = try cal.received()
        _ = try ivy.received()
        harness.clock.advance(.seconds(3 * 3600))
        for party in [cal, ivy] {
            await party.send(.iceServers, callId: callId)
            #expect(
                try party.received() == [
                    .iceServers(callId, Self.minting.iceServers(for: party.id, at: harness.clock.now))
                ])
        }
        _ = try eve.received()
        await eve.send(.iceServers, callId: callId)
        #expect(try eve.received().map(\.errorCode) == [.notAParty])
        await cal.send(.hangup, callId: callId)
        _ = try cal.received()
        await cal.send(.iceServers, callId: callId)
        #expect(try cal.received().map(\.errorCode) == [.unknownCall])
    }
}
