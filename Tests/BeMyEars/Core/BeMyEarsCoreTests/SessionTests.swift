import BeMyEarsCore
import BeMyEarsTestSupport
import CanonicalJSON
import Foundation
import Testing

@Suite("Sessions: malformed frames, rate limiting, heartbeat expiry, ordering")
struct SessionTests {
    @Test(
        "not JSON, not an object, or no string type: ERROR PROTOCOL_ERROR, close 1002, session gone",
        arguments: ["not json", "[1,2]", "\"REGISTER\"", "{}", "{\"type\":5}", "{\"type\":\"HEARTBEAT\",}"]
    )
    func protocolErrorCloses(text: String) async throws {
        let harness = Harness()
        let bob = try await harness.interpreter("bob")
        let carol = try await harness.caller("carol")
        _ = try carol.received()
        await bob.send(text: text)
        #expect(try bob.received().map(\.errorCode) == [.protocolError])
        #expect(bob.closeCode == .protocolError)
        #expect(try await harness.interpreterState("bob") == nil)
        #expect(try carol.received() == [.presence([])])
        await bob.send(.heartbeat)
        #expect(try bob.received().isEmpty, "a closed session receives nothing more")
    }

    @Test("a frame over 65,536 bytes: ERROR PROTOCOL_ERROR and close 1009")
    func tooLarge() async throws {
        let harness = Harness()
        let bob = try await harness.interpreter("bob")
        await bob.send(
            .statsUpdate,
            callId: CallID(testNumber: 9),
            payload: ["p": .string(String(repeating: "x", count: 70_000))]
        )
        let refusal = try #require(try bob.received().first)
        #expect(refusal.errorCode == .protocolError)
        #expect(refusal.payload?["message"]?.stringValue?.contains("65536") == true)
        #expect(bob.closeCode == .messageTooBig)
        #expect(try await harness.interpreterState("bob") == nil)
    }

    @Test("an unknown type is UNKNOWN_TYPE and the socket stays open, before and after registering")
    func unknownTypeStaysOpen() async throws {
        let harness = Harness()
        let client = await harness.connect()
        await client.send(text: #"{"type":"DANCE","payload":{}}"#)
        #expect(try client.received().map(\.errorCode) == [.unknownType])
        await client.send(.register, payload: ["username": "carol", "role": "caller"])
        #expect(try client.received().first?.type == .registered)
        await client.send(text: #"{"type":"call_request","to":"bob"}"#)
        #expect(try client.received().map(\.errorCode) == [.unknownType])
        #expect(client.closeCode == nil)
    }

    @Test("a known type with a field of the wrong JSON type is PROTOCOL_ERROR and the socket stays open")
    func wrongFieldType() async throws {
        let harness = Harness()
        let carol = try await harness.caller("carol")
        await carol.send(text: #"{"type":"CALL_REQUEST","to":42}"#)
        await carol.send(text: #"{"type":"HANGUP","callId":1}"#)
        await carol.send(text: #"{"type":"OFFER","callId":"00000000-0000-4000-8000-000000000001","payload":"sdp"}"#)
        #expect(try carol.received().map(\.errorCode) == [.protocolError, .protocolError, .protocolError])
        #expect(carol.closeCode == nil)
        await carol.send(.heartbeat)
        #expect(try carol.received() == [.heartbeatAck])
    }

    @Test("rate limit: a burst of 100 passes, the 101st is RATE_LIMITED and dropped; 50 more per second")
    func rateLimit() async throws {
        let harness = Harness()
        let client = await harness.connect()
        await client.send(.register, payload: ["username": "carol", "role": "caller"])
        for _ in 0..<99 { await client.send(.heartbeat) }
        await client.send(.heartbeat)
        let first = try client.received()
        #expect(first.filter { $0 == .heartbeatAck }.count == 99)
        #expect(first.map(\.errorCode).compactMap { $0 } == [.rateLimited])
        let message = first.first { $0.errorCode == .rateLimited }?.payload?["message"]?.stringValue
        #expect(message?.contains("50 messages per second (bursts of 100)") == true)

        harness.clock.advance(.seconds(1))
        for _ in 0..<60 { await client.send(.heartbeat) }
        let second = try client.received()
        #expect(second.filter { $0 == .heartbeatAck }.count == 50)
        #expect(second.filter { $0.errorCode == .rateLimited }.count == 10)
        #expect(client.closeCode == nil)
        #expect(harness.outbound.logs.filter { $0.event == .rateLimited }.count == 2, "logged once per run")
    }

    @Test("heartbeat expiry: no message for 20 s closes 4001; any message keeps the session")
    func heartbeatExpiry() async throws {
        let harness = Harness()
        let bob = try await harness.interpreter("bob")
        let carol = try await harness.caller("carol")
        let idle = await harness.connect()
        _ = try carol.received()

        harness.clock.advance(.seconds(15))
        await carol.send(.heartbeat)
        await bob.send(text: "{\"type\":\"NOT_A_TYPE\"}")  // refused, but still an application message
        harness.clock.advance(.milliseconds(4_999))
        await harness.hub.tick()
        #expect(idle.closeCode == nil)
        harness.clock.advance(.milliseconds(1))
        await harness.hub.tick()
        #expect(idle.closeCode == .heartbeatExpired, "an unregistered silent socket expires too")
        #expect(bob.closeCode == nil)
        #expect(carol.closeCode == nil)

        harness.clock.advance(.seconds(15))
        await harness.hub.tick()
        #expect(bob.closeCode == .heartbeatExpired)
        #expect(carol.closeCode == .heartbeatExpired)
        #expect(try await harness.interpreterState("bob") == nil)
        #expect(try await harness.store.registration(of: Username("carol")!) == nil)
        #expect(harness.outbound.logs.filter { $0.event == .sessionEnded(.heartbeatExpired) }.count == 3)
        await harness.hub.disconnect(bob.id)  // the server reports the close afterwards: nothing more happens
        #expect(harness.outbound.logs.filter { $0.event == .sessionEnded(.disconnected) }.isEmpty)
    }

    /// The tick scans for expired sessions only once the earliest expiry it last saw has come; sessions that
    /// connected later, or spoke since, still expire at the first tick at or after their own expiry.
    @Test("staggered sessions each expire at the first tick after their own 20 s, scans skipped or not")
    func staggeredExpiry() async throws {
        let harness = Harness()
        var sockets: [(socket: TestClient, expiresAt: Int)] = []
        var now = 0  // milliseconds since the harness started
        for index in 0..<5 {
            sockets.append((await harness.connect(), now + 20_000))
            harness.clock.advance(.milliseconds(3_000 + 250 * index))
            now += 3_000 + 250 * index
            await harness.hub.tick()
        }
        // The first speaks at 10 s past its start: its expiry moves to then + 20 s.
        await sockets[0].socket.send(.heartbeat)
        sockets[0].expiresAt = now + 20_000
        while now < 45_000 {
            harness.clock.advance(.milliseconds(250))
            now += 250
            await harness.hub.tick()
            for (index, entry) in sockets.enumerated() {
                #expect(
                    (entry.socket.closeCode == .heartbeatExpired) == (now >= entry.expiresAt),
                    "socket \(index) at \(now) ms (expires at \(entry.expiresAt) ms)")
            }
        }
    }

    @Test("a frame that arrives while an earlier one waits for the store is handled after it, in order")
    func perSessionOrder() async throws {
        let store = GatedStore()
        let harness = Harness(store: store)
        let bob = try await harness.interpreter("bob")
        let carol = try await harness.caller("carol")
        let callId = try await harness.connectCall(bob, from: carol)

        await store.gate.arm()
        let offer = Task { await carol.send(.offer, callId: callId, payload: ["sdp": "o"]) }
        await store.waitUntilHeld()
        await carol.send(.ice, callId: callId, payload: ["candidate": "c1"])  // queued behind the OFFER
        await carol.send(.ice, callId: callId, payload: ["candidate": "c2"])
        #expect(try bob.received().isEmpty, "nothing overtakes the OFFER")
        await store.gate.open()
        await offer.value
        let forwarded = try bob.received()
        #expect(forwarded.map(\.type) == [.offer, .ice, .ice])
        #expect(forwarded.map { $0.payload?["candidate"]?.stringValue } == [nil, "c1", "c2"])
    }

    @Test("a disconnect is handled after the frames that arrived before it")
    func disconnectAfterQueuedFrames() async throws {
        let store = GatedStore()
        let harness = Harness(store: store)
        let bob = try await harness.interpreter("bob")
        let carol = try await harness.caller("carol")
        let callId = try await harness.connectCall(bob, from: carol)

        await store.gate.arm()
        let hangup = Task { await carol.send(.hangup, callId: callId) }
        await store.waitUntilHeld()
        await carol.disconnect()
        await store.gate.open()
        await hangup.value
        #expect(try bob.received() == [.callEnded(callId, reason: .hangup), .state(.available)])
        #expect(try await store.call(callId)?.ending?.reason == .hangup)
        #expect(try await store.registration(of: Username("carol")!) == nil)
    }
}

@Suite("Ordering: CALL_ENDED before the PRESENCE that shows the interpreter again")
struct EndingOrderTests {
    @Test("a presence refresh that overtakes the task ending a call still sends CALL_ENDED first")
    func refreshOvertakesEnding() async throws {
        let store = GatedStore()
        let harness = Harness(store: store)
        let bob = try await harness.interpreter("bob")
        let amy = try await harness.interpreter("amy", online: false)
        let carol = try await harness.caller("carol")
        let callId = try await harness.connectCall(bob, from: carol)

        await store.gate.arm(.after)
        let hangup = Task { await bob.send(.hangup, callId: callId) }
        await store.waitUntilHeld()  // the call has ended in the store; the hub has not announced it yet
        await amy.send(.setState, payload: ["state": "AVAILABLE"])
        await store.gate.open()
        await hangup.value

        #expect(
            try carol.received() == [
                .callEnded(callId, reason: .hangup), .presence([Username("amy")!, Username("bob")!]),
            ]
        )
        #expect(try bob.received() == [.callEnded(callId, reason: .hangup), .state(.available)])
    }
}

extension EndingOrderTests {
    @Test("a name that is AVAILABLE again on a new session is shown once the old call's ending has been sent")
    func sameNameReturnsDuringEnding() async throws {
        let store = GatedStore()
        let harness = Harness(store: store)
        let bob = try await harness.interpreter("bob")
        let carol = try await harness.caller("carol")
        let callId = try await harness.connectCall(bob, from: carol)

        await store.gate.arm(.before)
        let gone = Task { await bob.disconnect() }  // unregistered; ending the call is held
        await store.waitUntilHeld()
        let newBob = try await harness.interpreter("bob")
        #expect(try carol.received().isEmpty, "no PRESENCE showing bob while carol's call with bob is not over")
        await store.gate.open()
        await gone.value
        #expect(try carol.received() == [.callEnded(callId, reason: .disconnected), .presence([Username("bob")!])])
        #expect(try newBob.received().isEmpty)
    }
}
