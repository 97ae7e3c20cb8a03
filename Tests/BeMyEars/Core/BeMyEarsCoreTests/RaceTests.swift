import BeMyEarsCore
import BeMyEarsTestSupport
import Foundation
import Testing

/// Seed §7.2 and §20: concurrent CALL_REQUESTs for one interpreter result in exactly one call.
@Suite("Concurrent CALL_REQUESTs for one interpreter")
struct RaceTests {
    @Test(
        "50 callers at once: one CALL_RINGING, 49 BUSY, and the interpreter is AVAILABLE after the call",
        arguments: [0, 3]
    )
    func fiftyCallers(storeLatency: Int) async throws {
        let harness = Harness(store: GatedStore(latency: storeLatency))
        let bob = try await harness.interpreter("bob")
        var callers: [TestClient] = []
        for index in 0..<50 {
            callers.append(try await harness.caller("caller\(index)"))
        }
        for caller in callers { _ = try caller.received() }

        await withTaskGroup(of: Void.self) { group in
            for caller in callers {
                group.addTask { await caller.send(.callRequest, to: "bob") }
            }
        }

        var winners: [TestClient] = []
        var winningCalls: [String?] = []
        var busyCalls: [String?] = []
        for caller in callers {
            let answers = try caller.received().filter { $0.type != .presence }
            switch answers.map(\.type) {
            case [.callRinging]:
                winners.append(caller)
                winningCalls.append(answers[0].callId)
            case [.busy]:
                busyCalls.append(answers[0].callId)
            default:
                Issue.record("unexpected answer \(answers.map(\.type))")
            }
        }
        #expect(winners.count == 1)
        #expect(busyCalls.count == 49)
        // Every loser's BUSY names the call that won.
        #expect(Set(busyCalls) == Set(winningCalls), "BUSY callIds \(Set(busyCalls)), winner \(winningCalls)")
        let requests = try bob.received().filter { $0.type == .callRequest }
        #expect(requests.count == 1)
        #expect(try await harness.interpreterState("bob") == .ringing)
        #expect(harness.outbound.logs.filter { $0.event == .callRequested }.count == 1)

        let winner = try #require(winners.first)
        let callId = try #require(requests.first?.callId.flatMap(CallID.init))
        #expect(requests.first?.from == (try winner.registeredName()))
        await bob.send(.callAccept, callId: callId)
        await winner.send(.hangup, callId: callId)
        #expect(try await harness.interpreterState("bob") == .available)
        for caller in callers {
            #expect(try caller.allReceived().last?.presenceNames == ["bob"], "every caller sees bob again")
        }
    }

    @Test("the store's compare-and-set alone: 50 concurrent createCall → one created, 49 busy")
    func storeCompareAndSet() async throws {
        let store = InMemorySignalingStore()
        let now = ManualClock.start
        _ = await store.register(
            Registration(
                username: Username("bob")!,
                role: .interpreter,
                session: .random(),
                node: .local,
                registeredAt: now
            )
        )
        let bobSession = try #require(await store.registration(of: Username("bob")!)?.session)
        #expect(await store.setAvailability(.available, of: bobSession) == .changed(to: .available))
        var parties: [CallParty] = []
        for index in 0..<50 {
            let registration = Registration(
                username: Username("c\(index)xx")!,
                role: .caller,
                session: .random(),
                node: .local,
                registeredAt: now
            )
            _ = await store.register(registration)
            parties.append(registration.party)
        }
        let outcomes = await withTaskGroup(of: CallCreation?.self) { group in
            for (index, party) in parties.enumerated() {
                group.addTask {
                    await store.createCall(
                        CallRequest(
                            id: CallID(testNumber: index + 1),
                            caller: party,
                            interpreter: Username("bob")!,
                            requestedAt: now,
                            timeouts: CallTimeouts()
                        )
                    )
                }
            }
            var outcomes: [CallCreation?] = []
            for await outcome in group { outcomes.append(outcome) }
            return outcomes
        }
        let created = outcomes.compactMap { outcome -> CallRecord? in
            if case .created(let record)? = outcome { return record }
            return nil
        }
        #expect(created.count == 1)
        let record = try #require(created.first)
        #expect(outcomes.filter { $0 == .interpreterBusy(.ringing, call: record.id) }.count == 49)
        let update = await store.updateCall(
            record.id,
            with: .hangUp(by: record.caller.session, reason: .hangup),
            at: now
        )
        #expect(update.transition == .ended(.hangup))
        #expect(update.interpreterAvailableAgain)
        #expect(await store.availableInterpreters() == [Username("bob")!])
    }

    @Test("a call ends once even when a HANGUP, a disconnect and a timer race")
    func endsOnce() async throws {
        let harness = Harness()
        let bob = try await harness.interpreter("bob")
        let carol = try await harness.caller("carol")
        let callId = try await harness.ring(bob, from: carol)
        harness.clock.advance(.seconds(10))
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await carol.send(.hangup, callId: callId) }
            group.addTask { await bob.send(.hangup, callId: callId) }
            group.addTask { await harness.hub.tick() }
            group.addTask { await carol.disconnect() }
        }
        #expect(harness.outbound.logs.filter { if case .callEnded = $0.event { true } else { false } }.count == 1)
        #expect(try bob.received().filter { $0.type == .callEnded }.count == 1)
        #expect(try await harness.interpreterState("bob") == .available)
    }
}
