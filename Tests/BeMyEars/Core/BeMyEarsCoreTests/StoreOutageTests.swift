import BeMyEarsCore
import BeMyEarsTestSupport
import Testing

/// Issue 17 item 13: the shared store (PostgreSQL) is unreachable for a while — a restart. What happens meanwhile
/// is taken to it once it is back, so no call stays stuck and presence comes right.
@Suite("Store outage: nothing stuck once the store is back")
struct StoreOutageTests {
    @Test("an interpreter who disconnects during the outage: the call ends DISCONNECTED and the name is free after")
    func disconnectDuringOutage() async throws {
        let store = OutageStore()
        let harness = Harness(store: store)
        let bob = try await harness.interpreter("bob")
        let carol = try await harness.caller("carol")
        let watcher = try await harness.caller("walt")
        let callId = try await harness.connectCall(bob, from: carol)
        _ = try carol.received()
        _ = try watcher.received()

        store.isDown = true
        await bob.disconnect()
        await harness.hub.tick()  // still down: kept for later
        #expect(try carol.received().isEmpty)

        store.isDown = false
        await harness.hub.tick()
        #expect(try carol.received().filter { $0.type == .callEnded }.map(\.endReason) == ["DISCONNECTED"])
        #expect(try await store.inner.call(callId)?.isLive == false)
        #expect(try await store.inner.registration(of: Username("bob")!) == nil, "the name is free again")
        #expect(try watcher.received().allSatisfy { $0.presenceNames == [] })
    }

    @Test("a HANGUP during the outage is not refused; once the store is back both get CALL_ENDED and bob is listed")
    func hangUpDuringOutage() async throws {
        let store = OutageStore()
        let harness = Harness(store: store)
        let bob = try await harness.interpreter("bob")
        let carol = try await harness.caller("carol")
        let watcher = try await harness.caller("walt")
        let callId = try await harness.connectCall(bob, from: carol)
        _ = try carol.received()
        _ = try bob.received()
        _ = try watcher.received()

        store.isDown = true
        await carol.send(.hangup, callId: callId)
        #expect(try carol.received().isEmpty, "no ERROR: the hang-up is taken when the store is back")
        store.isDown = false
        await harness.hub.tick()
        for party in [carol, bob] {
            #expect(try party.received().filter { $0.type == .callEnded }.map(\.endReason) == ["HANGUP"])
        }
        #expect(try await harness.interpreterState("bob") == .available)
        #expect(try watcher.received().last?.presenceNames == ["bob"])
    }
}
