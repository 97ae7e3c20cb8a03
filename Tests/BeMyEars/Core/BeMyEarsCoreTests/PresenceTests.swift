import BeMyEarsCore
import BeMyEarsTestSupport
import CanonicalJSON
import Foundation
import Testing

@Suite("Presence: AVAILABLE interpreters, byte order, pushed to every caller")
struct PresenceTests {
    @Test("a caller gets PRESENCE right after REGISTERED")
    func afterRegistered() async throws {
        let harness = Harness()
        _ = try await harness.interpreter("zed")
        _ = try await harness.interpreter("amy")
        _ = try await harness.interpreter("offline", online: false)
        let caller = await harness.connect()
        await caller.send(.register, payload: ["username": "carol", "role": "caller"])
        let messages = try caller.received()
        #expect(messages.map(\.type) == [.registered, .presence])
        #expect(messages.last?.presenceNames == ["amy", "zed"])
    }

    @Test("the first PRESENCE of a caller is sent even when no interpreter is available")
    func emptyPresence() async throws {
        let harness = Harness()
        let caller = await harness.connect()
        await caller.send(.register, payload: ["username": "carol", "role": "caller"])
        #expect(try caller.received().last == .presence([]))
    }

    @Test("interpreters are listed by byte order of the username")
    func byteOrder() async throws {
        let harness = Harness()
        for name in ["bob", "b_b", "b.b", "b-b", "b0b", "Abe", "_x_"] {
            _ = try await harness.interpreter(name)
        }
        let caller = await harness.connect()
        await caller.send(.register, payload: ["username": "carol", "role": "caller"])
        #expect(try caller.received().last?.presenceNames == ["_x_", "abe", "b-b", "b.b", "b0b", "b_b", "bob"])
    }

    @Test("Go Online / Go Offline: STATE to the interpreter and PRESENCE to every caller, only on change")
    func onlineOffline() async throws {
        let harness = Harness()
        let callers = [try await harness.caller("carol"), try await harness.caller("dave")]
        for caller in callers { #expect(try caller.allReceived().map(\.type) == [.registered, .presence]) }

        let bob = try await harness.interpreter("bob", online: false)
        for caller in callers { #expect(try caller.received().isEmpty, "an UNAVAILABLE interpreter changes nothing") }

        await bob.send(.setState, payload: ["state": "AVAILABLE"])
        #expect(try bob.received() == [.state(.available)])
        for caller in callers { #expect(try caller.received().map(\.presenceNames) == [["bob"]]) }

        await bob.send(.setState, payload: ["state": "AVAILABLE"])
        #expect(try bob.received() == [.state(.available)], "no change: STATE repeats the state")
        for caller in callers { #expect(try caller.received().isEmpty, "no change: no PRESENCE") }

        await bob.send(.setState, payload: ["state": "UNAVAILABLE"])
        #expect(try bob.received() == [.state(.unavailable)])
        for caller in callers { #expect(try caller.received().map(\.presenceNames) == [[]]) }
    }

    @Test("SET_STATE with another state is PROTOCOL_ERROR; from a caller ROLE_FORBIDDEN")
    func setStateErrors() async throws {
        let harness = Harness()
        let bob = try await harness.interpreter("bob", online: false)
        for state in ["RINGING", "IN_CALL", "available", "ONLINE"] {
            await bob.send(.setState, payload: ["state": .string(state)])
        }
        await bob.send(.setState)
        #expect(try bob.received().map(\.errorCode) == Array(repeating: .protocolError, count: 5))
        #expect(try await harness.interpreterState("bob") == .unavailable)

        let carol = try await harness.caller("carol")
        _ = try carol.received()
        await carol.send(.setState, payload: ["state": "AVAILABLE"])
        #expect(try carol.received().map(\.errorCode) == [.roleForbidden])
    }

    @Test("RINGING and IN_CALL interpreters are hidden; SET_STATE is BAD_STATE then")
    func hiddenWhileBusy() async throws {
        let harness = Harness()
        let bob = try await harness.interpreter("bob")
        _ = try await harness.interpreter("amy")
        let carol = try await harness.caller("carol")
        let dave = try await harness.caller("dave")
        _ = try carol.received()
        _ = try dave.received()

        await carol.send(.callRequest, to: "bob")
        #expect(try carol.received().map(\.type) == [.callRinging, .presence])
        #expect(try carol.allReceived().last?.presenceNames == ["amy"])
        #expect(try dave.received().map(\.presenceNames) == [["amy"]])
        #expect(try bob.received().map(\.type) == [.state, .callRequest])

        for state in ["AVAILABLE", "UNAVAILABLE"] {
            await bob.send(.setState, payload: ["state": .string(state)])
            #expect(try bob.received().map(\.errorCode) == [.badState])
        }
        #expect(try await harness.interpreterState("bob") == .ringing)
    }

    @Test("interpreters never receive PRESENCE")
    func interpretersGetNoPresence() async throws {
        let harness = Harness()
        let bob = try await harness.interpreter("bob")
        _ = try await harness.interpreter("amy")
        _ = try await harness.caller("carol")
        #expect(try bob.allReceived().allSatisfy { $0.type != .presence })
    }

    @Test("an AVAILABLE interpreter that disconnects disappears from every caller's list")
    func disconnectRemoves() async throws {
        let harness = Harness()
        let bob = try await harness.interpreter("bob")
        let carol = try await harness.caller("carol")
        #expect(try carol.allReceived().last == .presence([Username("bob")!]))
        await bob.disconnect()
        #expect(try carol.received() == [.presence([])])
        #expect(try await harness.store.registration(of: Username("bob")!) == nil)
    }

    @Test("presence changes are published for other nodes")
    func published() async throws {
        let harness = Harness()
        let bob = try await harness.interpreter("bob")
        #expect(harness.outbound.takePresencePublications() == 1)
        await bob.send(.setState, payload: ["state": "UNAVAILABLE"])
        #expect(harness.outbound.takePresencePublications() == 1)
        await bob.send(.setState, payload: ["state": "UNAVAILABLE"])
        #expect(harness.outbound.takePresencePublications() == 0)
    }

    @Test("changes within 100 ms of a caller's last PRESENCE reach it as one PRESENCE when the 100 ms have passed")
    func coalesced() async throws {
        let harness = Harness(configuration: .standard)
        let callers = [try await harness.caller("carol"), try await harness.caller("dave")]
        let interpreters = [
            try await harness.interpreter("amy", online: false),
            try await harness.interpreter("bob", online: false),
            try await harness.interpreter("cem", online: false),
        ]
        // A storm of toggles at one instant: none reaches the callers yet, one wake-up is asked for.
        for round in 0..<20 {
            for interpreter in interpreters {
                let state = round.isMultiple(of: 2) ? "AVAILABLE" : "UNAVAILABLE"
                await interpreter.send(.setState, payload: ["state": .string(state)])
            }
        }
        await interpreters[1].send(.setState, payload: ["state": "AVAILABLE"])
        for caller in callers { #expect(try caller.received().isEmpty, "held back: PRESENCE was sent 0 ms ago") }
        #expect(harness.outbound.wakes == [ManualClock.start.addingTimeInterval(0.1)])

        harness.clock.advance(.milliseconds(60))
        await harness.hub.wake()  // Early: nothing yet, and the wake-up is asked for again.
        for caller in callers { #expect(try caller.received().isEmpty) }
        #expect(harness.outbound.wakes.count == 2)

        harness.clock.advance(.milliseconds(40))
        await harness.hub.wake()
        for caller in callers { #expect(try caller.received().map(\.presenceNames) == [["bob"]], "the latest list") }

        // Quiet for 100 ms: the next change goes out at once.
        harness.clock.advance(.milliseconds(100))
        await interpreters[0].send(.setState, payload: ["state": "AVAILABLE"])
        for caller in callers { #expect(try caller.received().map(\.presenceNames) == [["amy", "bob"]]) }
        #expect(harness.outbound.wakes.count == 2)
    }

    @Test("a change back to the list a caller holds sends nothing, and a lost wake-up is made good by the tick")
    func coalescedByTick() async throws {
        let harness = Harness(configuration: .standard)
        let carol = try await harness.caller("carol")
        let bob = try await harness.interpreter("bob", online: false)
        await bob.send(.setState, payload: ["state": "AVAILABLE"])
        await bob.send(.setState, payload: ["state": "UNAVAILABLE"])
        harness.clock.advance(.milliseconds(100))
        await harness.hub.wake()
        #expect(try carol.received().isEmpty, "carol already holds the empty list")

        await bob.send(.setState, payload: ["state": "AVAILABLE"])
        await bob.send(.setState, payload: ["state": "UNAVAILABLE"])
        await bob.send(.setState, payload: ["state": "AVAILABLE"])
        #expect(try carol.received().map(\.presenceNames) == [["bob"]], "100 ms after carol's last: at once")
        await bob.send(.setState, payload: ["state": "UNAVAILABLE"])
        #expect(try carol.received().isEmpty)
        harness.clock.advance(.milliseconds(300))
        await harness.hub.tick()
        #expect(try carol.received().map(\.presenceNames) == [[]])
    }

    @Test("PRESENCE lists at most maximumPresenceEntries interpreters, the first in byte order")
    func capped() async throws {
        var configuration = SignalingConfiguration.immediatePresence
        configuration.maximumPresenceEntries = 3
        let harness = Harness(configuration: configuration)
        for name in ["eve", "dan", "cem", "bob", "amy"] {
            _ = try await harness.interpreter(name)
        }
        let carol = await harness.connect()
        await carol.send(.register, payload: ["username": "carol", "role": "caller"])
        #expect(try carol.received().last?.presenceNames == ["amy", "bob", "cem"])

        // The default cap keeps the longest possible PRESENCE within a 64 KiB frame.
        let longest = (0..<SignalingConfiguration.standard.maximumPresenceEntries).map {
            Username(String(format: "%032d", $0))!
        }
        #expect(EnvelopeCodec.encode(.presence(longest)).utf8.count <= 65_536)
    }
}
