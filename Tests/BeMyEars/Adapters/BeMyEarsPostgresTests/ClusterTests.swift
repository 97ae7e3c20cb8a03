import BeMyEarsCore
import BeMyEarsTestSupport
import CanonicalJSON
import Foundation
import TestSupport
import Testing

@testable import BeMyEarsPostgres

/// Two server nodes over one PostgreSQL database and the real LISTEN/NOTIFY bus: what the core's in-memory
/// cluster tests show with a hand-pumped channel, end to end.
@Suite("Two nodes over PostgreSQL", .heavy(cores: 1.25, "two nodes' pools and LISTEN sessions on PostgreSQL"))
struct ClusterTests {
    /// Two started nodes on a fresh database, stopped after `body`.
    func withCluster(
        _ prefix: String,
        _ body: (TestNode, TestNode, LocalPostgres.Database) async throws -> Void
    ) async throws {
        let database = try await freshDatabase(prefix)
        let clock = ManualClock()
        let nodeA = try await TestNode.start("node-a", url: database.socketURL, clock: clock, firstCallNumber: 1)
        let nodeB: TestNode
        do {
            nodeB = try await TestNode.start("node-b", url: database.tcpURL, clock: clock, firstCallNumber: 1_000)
        } catch {
            await nodeA.stop()
            throw error
        }
        do {
            try await body(nodeA, nodeB, database)
        } catch {
            await nodeB.stop()
            await nodeA.stop()
            throw error
        }
        await nodeB.stop()
        await nodeA.stop()
    }

    /// An SDP-like text of `bytes` bytes with CRLF lines (escaped in JSON) and a non-ASCII character.
    static func sdp(bytes: Int) -> String {
        var text = "v=0\r\no=- 4611731400430051336 2 IN IP4 127.0.0.1\r\ns=Gebärdensprache\r\n"
        var line = 0
        while text.utf8.count < bytes {
            line += 1
            text += "a=candidate:\(line) 1 udp 2122260223 192.168.1.\(line % 250) \(50_000 + line) typ host\r\n"
        }
        return String(decoding: text.utf8.prefix(bytes), as: UTF8.self)
    }

    @Test("a call from a caller on A to an interpreter on B: ringing, accept, 60 KB offer, answer, hang-up")
    func crossNodeCall() async throws {
        try await withCluster("call") { nodeA, nodeB, database in
            let carol = try await nodeA.caller("carol")
            let dave = try await nodeB.caller("dave")
            let bob = try await nodeB.interpreter("bob")
            let bobName = Username("bob")!
            #expect(try await carol.receive(count: 1) == [.presence([bobName])], "B's presence change reached A")
            #expect(try await dave.receive(count: 1) == [.presence([bobName])])

            await carol.send(.callRequest, to: "bob")
            let callId = CallID(testNumber: 1)
            #expect(
                try await carol.receive(count: 2) == [
                    .callRinging(callId, to: bobName, ringSeconds: 10), .presence([]),
                ]
            )
            #expect(
                try await bob.receive(count: 2)
                    == [.state(.ringing), .callRequest(callId, from: Username("carol")!, to: bobName)]
            )
            #expect(try await dave.receive(count: 1) == [.presence([])])

            await bob.send(.callAccept, callId: callId)
            #expect(try await bob.receive(count: 1) == [.state(.inCall)])
            #expect(try await carol.receive(count: 1) == [.callAccept(callId, from: bobName, to: Username("carol")!)])

            // A 60 KB offer does not fit a NOTIFY payload: it crosses through a table row, intact and in order.
            let offer = Self.sdp(bytes: 60_000)
            await carol.send(.offer, callId: callId, payload: ["type": "offer", "sdp": .string(offer)])
            await carol.send(.ice, callId: callId, payload: ["candidate": "a=candidate:1 1 udp 1 10.0.0.1 9 typ host"])
            let relayed = try await bob.receive(count: 2)
            #expect(relayed.map(\.type) == [.offer, .ice], "the small ICE does not overtake the large OFFER")
            #expect(relayed.first?.payload?["sdp"]?.stringValue == offer)
            #expect(relayed.first?.from == "carol")
            let leftover = try await LocalPostgres.shared().psql(
                "SELECT count(*) FROM bemyears_bus_payloads",
                database: database.name
            )
            #expect(leftover == "0\n", "the receiver deleted the stored message")

            await bob.send(
                .answer, callId: callId, payload: ["type": "answer", "sdp": .string(Self.sdp(bytes: 2_000))])
            let answer = try await carol.receive(count: 1)
            #expect(answer.map(\.type) == [.answer])
            #expect(answer.first?.payload?["sdp"]?.stringValue == Self.sdp(bytes: 2_000))

            // The interpreter on B hangs up: carol's CALL_ENDED crosses the bus before the presence notice.
            await bob.send(.hangup, callId: callId)
            #expect(try await bob.receive(count: 2) == [.callEnded(callId, reason: .hangup), .state(.available)])
            #expect(try await carol.receive(count: 2) == [.callEnded(callId, reason: .hangup), .presence([bobName])])
            #expect(try await dave.receive(count: 1) == [.presence([bobName])])
            #expect(try await carol.drain().isEmpty)
            #expect(try await bob.drain().isEmpty)
            #expect(try await nodeA.store.registration(of: bobName)?.interpreterState == .available)
        }
    }

    @Test("the caller on A hangs up: both parties get CALL_ENDED before any PRESENCE shows bob AVAILABLE")
    func callerHangsUp() async throws {
        try await withCluster("hangup") { nodeA, nodeB, _ in
            let carol = try await nodeA.caller("carol")
            let dave = try await nodeB.caller("dave")
            let bob = try await nodeB.interpreter("bob")
            let bobName = Username("bob")!
            _ = try await carol.receive(count: 1)
            _ = try await dave.receive(count: 1)
            await carol.send(.callRequest, to: "bob")
            let callId = CallID(testNumber: 1)
            _ = try await carol.receive(count: 2)
            _ = try await bob.receive(count: 2)
            await bob.send(.callAccept, callId: callId)
            _ = try await bob.receive(count: 1)
            _ = try await carol.receive(count: 1)
            _ = try await dave.receive(count: 1)

            await carol.send(.hangup, callId: callId)
            #expect(try await carol.receive(count: 2) == [.callEnded(callId, reason: .hangup), .presence([bobName])])
            #expect(try await bob.receive(count: 2) == [.callEnded(callId, reason: .hangup), .state(.available)])
            #expect(try await dave.receive(count: 1) == [.presence([bobName])])
        }
    }

    @Test("messages forwarded to a node arrive complete and in order, small and large mixed")
    func orderedMixedSizes() async throws {
        try await withCluster("order") { nodeA, nodeB, _ in
            let receiver = await nodeB.connect()
            var sent: [Envelope] = []
            for index in 0..<120 {
                // Around the NOTIFY limit too: some inline, some through the table.
                let size = [10, 7_700, 7_950, 8_100, 30_000][index % 5] + index
                let envelope = Envelope(
                    type: .ice,
                    callId: CallID(testNumber: 1).rawValue,
                    from: "carol",
                    to: "bob",
                    payload: ["n": .string("\(index)"), "candidate": .string(Self.sdp(bytes: size))]
                )
                sent.append(envelope)
                nodeA.bus.forward(envelope, to: receiver.id, on: nodeB.node)
            }
            let received = try await receiver.receive(count: sent.count, timeout: .seconds(60))
            #expect(received.map { $0.payload?["n"]?.stringValue } == sent.map { $0.payload?["n"]?.stringValue })
            #expect(received == sent)
        }
    }

    @Test("PostgreSQL's NOTIFY limit: a 7999-byte notice goes inline, an 8000-byte one through the table")
    func notifyLimitBoundary() async throws {
        try await withCluster("limit") { nodeA, nodeB, database in
            // The limit itself, as PostgreSQL enforces it.
            let server = try await LocalPostgres.shared()
            await #expect(throws: (any Error).self) {
                try await server.psql("SELECT pg_notify('probe', repeat('x', 8000))", database: database.name)
            }
            try await server.psql("SELECT pg_notify('probe', repeat('x', 7999))", database: database.name)

            let receiver = await nodeB.connect()
            func envelope(_ padding: Int) -> Envelope {
                Envelope(
                    type: .ice,
                    callId: CallID(testNumber: 1).rawValue,
                    payload: ["c": .string(String(repeating: "x", count: padding))]
                )
            }
            // The bus's own decision at the boundary (sequence numbers fixed so the header's size is known).
            func notice(_ padding: Int, sequence: UInt64) -> BusNotice {
                BusNotice(
                    source: "node-x", epoch: "e", sequence: sequence, kind: .forward, target: nodeB.node.rawValue,
                    session: receiver.id.uuid, text: EnvelopeCodec.encode(envelope(padding))
                )
            }
            let padding = BusNotice.maximumPayloadBytes - (try notice(0, sequence: 1).encoded().utf8.count)
            #expect(try notice(padding, sequence: 1).encoded().utf8.count == 7_999)
            #expect(try notice(padding + 1, sequence: 2).encoded().utf8.count == 8_000)

            // Published as a sender "node-x" would: exactly 7999 bytes inline, then the 8000-byte one stored.
            let inline = try notice(padding, sequence: 1).encoded()
            var reference = notice(padding + 1, sequence: 2)
            let id = UUID()
            reference.kind = .stored
            reference.text = nil
            reference.payload = id
            var batch = PostgresClusterBus.Batch()
            batch.notices = [inline, try reference.encoded()]
            batch.payloadIDs = [id]
            batch.payloadTargets = [nodeB.node.rawValue]
            batch.payloadBodies = [EnvelopeCodec.encode(envelope(padding + 1))]
            #expect(await nodeA.bus.publish(batch))
            #expect(try await receiver.receive(count: 2) == [envelope(padding), envelope(padding + 1)])

            // And through the bus's own encoder: the same two sizes, one inline and one stored.
            var sequence: UInt64 = 0
            let batches = nodeA.bus.encode(
                [
                    .forward(envelope(padding - 40), receiver.id, nodeB.node),
                    .forward(envelope(padding + 40), receiver.id, nodeB.node),
                ],
                sequence: &sequence
            )
            #expect(batches.count == 1)
            #expect(batches.first?.payloadIDs.count == 1, "only the larger one is stored")
            #expect(batches.first?.notices.allSatisfy { $0.utf8.count <= BusNotice.maximumPayloadBytes } == true)
            let leftover = try await server.psql("SELECT count(*) FROM bemyears_bus_payloads", database: database.name)
            #expect(leftover == "0\n", "the receiver deleted the stored body")
        }
    }

    @Test("a node that stops heartbeating is evicted: its calls end DISCONNECTED, presence drops its interpreters")
    func eviction() async throws {
        try await withCluster("evict") { nodeA, nodeB, database in
            let carol = try await nodeA.caller("carol")
            let bob = try await nodeB.interpreter("bob")
            _ = try await nodeB.interpreter("otto")
            _ = try await carol.receive(through: { $0.presenceNames == ["bob", "otto"] })
            await carol.send(.callRequest, to: "bob")
            let callId = CallID(testNumber: 1)
            _ = try await carol.receive(count: 2)
            _ = try await bob.receive(count: 2)
            await bob.send(.callAccept, callId: callId)
            _ = try await carol.receive(count: 1)

            await nodeB.stop()  // B vanishes without cleaning up: its rows stay, its heartbeat ages
            let messages = try await carol.receive(count: 2, timeout: .seconds(30))
            #expect(messages == [.callEnded(callId, reason: .disconnected), .presence([])])
            #expect(try await nodeA.store.registration(of: Username("bob")!) == nil)
            #expect(try await nodeA.store.registration(of: Username("otto")!) == nil)
            try await eventually("B's heartbeat row is removed") {
                try await LocalPostgres.shared().psql(
                    "SELECT node FROM bemyears_nodes ORDER BY node",
                    database: database.name
                ) == "node-a\n"
            }
            #expect(try await nodeA.store.registration(of: Username("carol")!) != nil, "a node never evicts itself")
            #expect(nodeA.evictions == 0)
        }
    }

    @Test("a node restarted under the same identity frees its previous run's names at once and ends their calls")
    func restartTakesOverLeftovers() async throws {
        let database = try await freshDatabase("restart")
        let clock = ManualClock()
        // Long staleness: only the takeover can free bob's name within the test.
        let slow = PostgresClusterBus.Configuration(heartbeatInterval: .milliseconds(200), staleAfter: .seconds(600))
        let nodeA = try await TestNode.start("node-a", url: database.socketURL, clock: clock, configuration: slow)
        let firstB = try await TestNode.start(
            "node-b", url: database.socketURL, clock: clock, firstCallNumber: 1_000,
            configuration: slow)
        let carol = try await nodeA.caller("carol")
        let bob = try await firstB.interpreter("bob")
        _ = try await carol.receive(through: { $0.presenceNames == ["bob"] })
        await carol.send(.callRequest, to: "bob")
        _ = try await carol.receive(count: 2)
        _ = try await bob.receive(count: 2)
        await firstB.stop()

        let secondB = try await TestNode.start(
            "node-b", url: database.socketURL, clock: clock, firstCallNumber: 2_000,
            configuration: slow)
        #expect(
            try await carol.receive(count: 1, timeout: .seconds(30))
                == [.callEnded(CallID(testNumber: 1), reason: .disconnected)]
        )
        try await eventually("bob's name is free again") {
            try await nodeA.store.registration(of: Username("bob")!) == nil
        }
        let newBob = try await secondB.interpreter("bob")
        _ = newBob
        #expect(try await carol.receive(count: 1) == [.presence([Username("bob")!])])
        await secondB.stop()
        await nodeA.stop()
    }

    @Test("a node whose heartbeat the others saw go stale learns that it was taken for dead")
    func evictedWhileAlive() async throws {
        try await withCluster("alive") { nodeA, nodeB, database in
            _ = try await nodeB.interpreter("bob")
            #expect(nodeB.evictions == 0)
            // As if B had been unreachable for an hour (A may evict it meanwhile); B's next heartbeat notices.
            try await LocalPostgres.shared().psql(
                "UPDATE bemyears_nodes SET heartbeat_at = now() - interval '1 hour' WHERE node = 'node-b'",
                database: database.name
            )
            try await eventually("B is told") { nodeB.evictions >= 1 }
            try await eventually("B's heartbeat is fresh again") {
                try await LocalPostgres.shared().psql(
                    "SELECT count(*) FROM bemyears_nodes "
                        + "WHERE node = 'node-b' AND heartbeat_at > now() - interval '1 minute'",
                    database: database.name
                ) == "1\n"
            }
            #expect(nodeA.evictions == 0)
        }
    }

    @Test("a listener whose connection is killed reconnects and receives again")
    func listenerReconnects() async throws {
        try await withCluster("relisten") { nodeA, nodeB, database in
            let receiver = await nodeB.connect()
            let killed = try await LocalPostgres.shared().psql(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                    + "WHERE datname = current_database() AND query LIKE 'LISTEN%'",
                database: database.name
            )
            #expect(killed == "2\n", "both nodes' LISTEN connections")
            try await withTimeout(.seconds(30), "listening again") {
                try await eventually("B listens again") {
                    try await LocalPostgres.shared().psql(
                        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                            + "AND query LIKE 'LISTEN%' AND application_name = 'bemyears'",
                        database: database.name
                    ) == "2\n"
                }
            }
            let envelope = Envelope(type: .ice, callId: CallID(testNumber: 1).rawValue, payload: ["c": "after"])
            nodeA.bus.forward(envelope, to: receiver.id, on: nodeB.node)
            #expect(try await receiver.receive(count: 1) == [envelope])
        }
    }
}
