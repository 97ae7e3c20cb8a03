import BeMyEarsCore
import NIOCore
import Testing

@testable import BeMyEarsServer

@Suite("Per-socket outgoing queue")
struct OutboundQueueTests {
    private func frame(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }

    private func texts(_ items: [OutboundQueue.Item]) -> [String] {
        items.map {
            switch $0 {
            case .frame(let buffer): String(buffer: buffer)
            case .close(let code): "close \(code)"
            }
        }
    }

    /// Frames come out in the order they went in, a close last, nothing after the close; the event loop is asked
    /// once per batch.
    @Test func keepsOrderAndEndsWithClose() {
        var queue = OutboundQueue(limit: 1 << 20)
        #expect(queue.enqueue(frame("a")) == .queued(schedule: true))
        #expect(queue.enqueue(frame("b")) == .queued(schedule: false))
        #expect(texts(queue.takeBatch(now: .now()).items) == ["a", "b"])
        #expect(queue.enqueue(frame("c")) == .queued(schedule: true))
        #expect(queue.close(.heartbeatExpired) == false)
        #expect(queue.enqueue(frame("d")) == .refused)
        #expect(queue.close(.protocolError) == nil)
        #expect(texts(queue.takeBatch(now: .now()).items) == ["c", "close 4001"])
    }

    /// Over the limit of unwritten bytes (queued, or handed to the channel and not yet written) the queue refuses,
    /// finishes, and reports the overflow once; written bytes make room again.
    @Test func overflowOnce() {
        var queue = OutboundQueue(limit: 1_000)
        let big = frame(String(repeating: "x", count: 400))
        #expect(queue.enqueue(big) == .queued(schedule: true))
        #expect(queue.enqueue(big) == .queued(schedule: false))
        let batch = queue.takeBatch(now: .now())
        #expect(batch.bytes == 800)
        queue.didWrite(400, now: .now())  // the kernel took one
        #expect(queue.enqueue(big) == .queued(schedule: true))  // 800 pending
        #expect(queue.enqueue(big) == .overflow)  // 1,200 > 1,000
        #expect(queue.enqueue(frame("y")) == .refused)
        #expect(queue.waiting.isEmpty, "a dropped client's frames are forgotten")
    }

    /// Bytes handed to the channel that the kernel does not take for the timeout make the client stalled; any
    /// progress restarts the clock; nothing handed, nothing stalled.
    @Test func stall() {
        var queue = OutboundQueue(limit: 1 << 20)
        let start = NIODeadline.now()
        #expect(queue.enqueue(frame("first")) == .queued(schedule: true))
        #expect(!queue.isStalled(now: start + .seconds(60), after: .seconds(5)), "nothing handed to the channel yet")
        _ = queue.takeBatch(now: start)
        #expect(!queue.isStalled(now: start + .milliseconds(4_900), after: .seconds(5)))
        #expect(queue.isStalled(now: start + .seconds(5), after: .seconds(5)))
        queue.didWrite(5, now: start + .seconds(5))
        #expect(!queue.isStalled(now: start + .seconds(60), after: .seconds(5)), "all written")

        #expect(queue.enqueue(frame("second")) == .queued(schedule: true))
        #expect(queue.enqueue(frame("third")) == .queued(schedule: false))
        _ = queue.takeBatch(now: start + .seconds(10))
        queue.didWrite(6, now: start + .seconds(14))  // progress: the rest waits since then
        #expect(!queue.isStalled(now: start + .seconds(18), after: .seconds(5)))
        #expect(queue.isStalled(now: start + .seconds(19), after: .seconds(5)))
    }
}
