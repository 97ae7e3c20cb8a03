import BeMyEarsCore
import BeMyEarsTestSupport
import CanonicalJSON
import Testing

/// Several server processes over one shared store: sessions on different nodes, timers fired by any node,
/// presence and forwarded messages over an ordered channel.
@Suite("Several nodes sharing a store")
struct MultiNodeTests {
    @Test("a call between sessions on two nodes, from presence to hang-up")
    func crossNodeCall() async throws {
        let cluster = Cluster(nodeCount: 2)
        let (nodeA, nodeB) = (cluster.nodes[0], cluster.nodes[1])
        let carol = try await nodeA.caller("carol")
        let bob = try await nodeB.interpreter("bob")
        try await cluster.pump()
        #expect(try carol.received() == [.presence([Username("bob")!])], "B's presence change reached A's caller")

        await carol.send(.callRequest, to: "bob")
        let callId = CallID(testNumber: 1)
        #expect(try carol.received() == [.callRinging(callId, to: Username("bob")!, ringSeconds: 10), .presence([])])
        #expect(try bob.received().isEmpty, "not delivered until the channel carries it")
        try await cluster.pump()
        #expect(
            try bob.received() == [
                .state(.ringing), .callRequest(callId, from: Username("carol")!, to: Username("bob")!),
            ]
        )

        await bob.send(.callAccept, callId: callId)
        #expect(try bob.received() == [.state(.inCall)])
        try await cluster.pump()
        #expect(try carol.received() == [.callAccept(callId, from: Username("bob")!, to: Username("carol")!)])

        await carol.send(.offer, callId: callId, payload: ["sdp": "o"])
        try await cluster.pump()
        #expect(
            try bob.received() == [
                Envelope(type: .offer, callId: callId.rawValue, from: "carol", to: "bob", payload: ["sdp": "o"])
            ]
        )

        await carol.send(.hangup, callId: callId)
        #expect(try carol.received() == [.callEnded(callId, reason: .hangup), .presence([Username("bob")!])])
        try await cluster.pump()
        #expect(try bob.received() == [.callEnded(callId, reason: .hangup), .state(.available)])
        #expect(try await nodeA.interpreterState("bob") == .available)
    }

    @Test("a ring timeout is fired by whichever node ticks, once, and the caller on the other node is told first")
    func timerOnAnotherNode() async throws {
        let cluster = Cluster(nodeCount: 2)
        let (nodeA, nodeB) = (cluster.nodes[0], cluster.nodes[1])
        let carol = try await nodeA.caller("carol")
        let bob = try await nodeB.interpreter("bob")
        let amy = try await nodeA.interpreter("amy", online: false)
        try await cluster.pump()
        await carol.send(.callRequest, to: "bob")
        try await cluster.pump()
        let callId = CallID(testNumber: 1)
        _ = try carol.received()
        _ = try bob.received()

        cluster.clock.advance(.seconds(10))
        await nodeB.hub.tick()  // B ends the call; its CALL_ENDED for carol is still on the channel
        await nodeA.hub.tick()  // finds nothing left to end
        #expect(try bob.received() == [.callEnded(callId, reason: .ringTimeout), .state(.available)])

        // Something on A refreshes presence before B's messages arrive: carol must hear the ending first.
        await amy.send(.setState, payload: ["state": "AVAILABLE"])
        #expect(
            try carol.received() == [
                .callEnded(callId, reason: .ringTimeout), .presence([Username("amy")!, Username("bob")!]),
            ]
        )
        try await cluster.pump()
        #expect(try carol.received().isEmpty, "B's copy of CALL_ENDED is not delivered twice")
        let endings = (nodeA.outbound.logs + nodeB.outbound.logs).filter { $0.event == .callEnded(.ringTimeout) }
        #expect(endings.count == 1)
    }

    @Test("50 callers on two nodes call one interpreter at once: exactly one call")
    func raceAcrossNodes() async throws {
        let cluster = Cluster(nodeCount: 2)
        let bob = try await cluster.nodes[1].interpreter("bob")
        var callers: [TestClient] = []
        for index in 0..<50 {
            callers.append(try await cluster.nodes[index % 2].caller("caller\(index)"))
        }
        try await cluster.pump()
        await withTaskGroup(of: Void.self) { group in
            for caller in callers {
                group.addTask { await caller.send(.callRequest, to: "bob") }
            }
        }
        try await cluster.pump()
        var ringing = 0
        var busy = 0
        for caller in callers {
            for message in try caller.received() {
                if message.type == .callRinging { ringing += 1 }
                if message.type == .busy { busy += 1 }
            }
        }
        #expect(ringing == 1)
        #expect(busy == 49)
        #expect(try bob.received().filter { $0.type == .callRequest }.count == 1)
    }

    @Test("when a node dies, another evicts its sessions: calls end DISCONNECTED, presence drops them")
    func evictDeadNode() async throws {
        let cluster = Cluster(nodeCount: 2)
        let (nodeA, nodeB) = (cluster.nodes[0], cluster.nodes[1])
        let carol = try await nodeA.caller("carol")
        let bob = try await nodeB.interpreter("bob")
        _ = try await nodeB.interpreter("otto")
        try await cluster.pump()
        let callId = try await {
            await carol.send(.callRequest, to: "bob")
            try await cluster.pump()
            await bob.send(.callAccept, callId: CallID(testNumber: 1))
            try await cluster.pump()
            return CallID(testNumber: 1)
        }()
        _ = try carol.received()

        await nodeA.hub.evictNode(nodeB.hub.node)  // node B vanished without cleaning up
        #expect(try carol.received() == [.callEnded(callId, reason: .disconnected), .presence([])])
        #expect(try await nodeA.interpreterState("bob") == nil)
        #expect(try await nodeA.interpreterState("otto") == nil)
        await nodeA.hub.evictNode(nodeA.hub.node)  // a node never evicts itself
        #expect(await cluster.store.registration(of: Username("carol")!) != nil)
    }
}
