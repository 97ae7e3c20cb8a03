import BeMyEarsCore
@testable import BeMyEarsServer
import Synchronization
import Testing

@Suite("Per-socket outgoing queue")
struct SessionOutboxTests {
    /// Frames come out in the order they went in, a close last; nothing after the close.
    @Test func keepsOrderAndEndsWithClose() async {
        let outbox = SessionOutbox(limit: 1 << 20) {}
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
        let overflows = Counter()
        let outbox = SessionOutbox(limit: 1_000) { overflows.increment() }
        let frame = String(repeating: "x", count: 400)
        #expect(outbox.enqueue(frame))
        #expect(outbox.enqueue(frame))
        outbox.didWrite(400)  // the socket took one
        #expect(outbox.enqueue(frame))  // 800 pending
        #expect(!outbox.enqueue(frame))  // 1,200 > 1,000
        #expect(!outbox.enqueue("y"))
        #expect(overflows.value == 1)
        var count = 0
        for await _ in outbox.items { count += 1 }
        #expect(count == 3)
    }
}

private final class Counter: Sendable {
    private let count = Mutex(0)

    func increment() { count.withLock { $0 += 1 } }

    var value: Int { count.withLock { $0 } }
}
