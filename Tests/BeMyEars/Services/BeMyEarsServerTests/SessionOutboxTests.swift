import BeMyEarsCore
import Logging
import Synchronization
import Testing

@testable import BeMyEarsServer

@Suite("Per-socket outgoing queue")
struct SessionOutboxTests {
    /// Frames come out in the order they went in, a close last; nothing after the close.
    @Test func keepsOrderAndEndsWithClose() async {
        let outbox = SessionOutbox(limit: 1 << 20) { _ in }
        #expect(outbox.enqueue("a"))
        #expect(outbox.enqueue("b"))
        outbox.close(.heartbeatExpired)
        #expect(!outbox.enqueue("c"))
        var items: [SessionOutbox.Item] = []
        for await item in outbox.items { items.append(item) }
        #expect(items == [.text("a"), .text("b"), .close(.heartbeatExpired)])
    }

    /// Over the limit of unwritten bytes the outbox refuses, finishes, and reports the overflow once; written
    /// bytes make room again.
    @Test func overflowDisconnectsOnce() async {
        let drops = Drops()
        let outbox = SessionOutbox(limit: 1_000) { drops.record($0) }
        let frame = String(repeating: "x", count: 400)
        #expect(outbox.enqueue(frame))
        #expect(outbox.enqueue(frame))
        outbox.didWrite(400)  // the socket took one
        #expect(outbox.enqueue(frame))  // 800 pending
        #expect(!outbox.enqueue(frame))  // 1,200 > 1,000
        #expect(!outbox.enqueue("y"))
        #expect(outbox.dropIfStalled(now: .now, after: .zero) == false)  // already given up: reported once
        #expect(drops.reasons == [.outboundBufferFull])
        var count = 0
        for await _ in outbox.items { count += 1 }
        #expect(count == 3)
    }

    /// A write that waits for the socket for the timeout drops the client once, whatever the backlog; a write that
    /// completed, or one younger than the timeout, does not.
    @Test func stalledWriteDisconnectsOnce() async {
        let drops = Drops()
        let outbox = SessionOutbox(limit: 1 << 20) { drops.record($0) }
        let start = ContinuousClock.now
        #expect(outbox.enqueue("first"))
        #expect(!outbox.dropIfStalled(now: start + .seconds(60), after: .seconds(5)))  // nothing is being written

        outbox.willWrite(at: start)
        outbox.didWrite(5)  // the socket took it at once
        #expect(!outbox.dropIfStalled(now: start + .seconds(60), after: .seconds(5)))

        #expect(outbox.enqueue("second"))
        outbox.willWrite(at: start + .seconds(10))  // this one waits: the client stopped reading
        #expect(!outbox.dropIfStalled(now: start + .seconds(14.9), after: .seconds(5)))
        #expect(outbox.dropIfStalled(now: start + .seconds(15), after: .seconds(5)))
        #expect(!outbox.dropIfStalled(now: start + .seconds(16), after: .seconds(5)))
        #expect(!outbox.enqueue("third"), "a dropped client's outbox takes no more frames")
        #expect(drops.reasons == [.writeStalled])
        var items: [SessionOutbox.Item] = []
        for await item in outbox.items { items.append(item) }
        #expect(items == [.text("first"), .text("second")])
    }

    /// The server's sweep drops exactly the stalled connections among the open ones.
    @Test func sweepDropsOnlyStalledConnections() {
        let drops = Drops()
        let sessions = WebSocketOutbound(cluster: nil, logger: .init(label: "test"))
        let start = ContinuousClock.now
        let reading = SessionOutbox(limit: 1 << 20) { _ in Issue.record("a reading client was dropped") }
        let stalled = SessionOutbox(limit: 1 << 20) { drops.record($0) }
        sessions.attach(reading, for: .random())
        sessions.attach(stalled, for: .random())
        reading.willWrite(at: start + .seconds(4))
        stalled.willWrite(at: start)
        #expect(sessions.dropStalled(now: start + .seconds(5), after: .seconds(5)) == 1)
        #expect(sessions.dropStalled(now: start + .seconds(6), after: .seconds(5)) == 0)
        #expect(drops.reasons == [.writeStalled])
    }
}

private final class Drops: Sendable {
    private let recorded = Mutex<[SessionOutbox.DropReason]>([])

    func record(_ reason: SessionOutbox.DropReason) { recorded.withLock { $0.append(reason) } }

    var reasons: [SessionOutbox.DropReason] { recorded.withLock { $0 } }
}
