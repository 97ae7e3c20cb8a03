import Foundation
import Synchronization
import Testing

@testable import GStreamer

/// Blocking GStreamer work on a fixed set of threads: bounded however many jobs come, in the order they came,
/// with their results and errors (issue 33 item 6: a thread per picture was unbounded under snapshot load).
@Suite("PipelineRunner: blocking pipeline work on bounded threads")
struct PipelineRunnerTests {
    struct Refused: Error, Equatable { let job: Int }

    /// State the jobs share with the test.
    final class Shared: Sendable {
        let order = Mutex<[Int]>([])
        let gate = Mutex(false)
        let holding = Mutex(false)
    }

    @Test("30 blocking jobs at once on a runner of 3: never more than 3 threads or 3 at a time, every result back")
    func bounded() async throws {
        let runner = PipelineRunner(threads: 3, name: "test-runner")
        let shared = Shared()
        let results = try await withThrowingTaskGroup(of: Int.self) { group in
            for job in 0..<30 {
                group.addTask {
                    try await runner.run { () throws(Refused) -> Int in
                        shared.order.withLock { $0.append(job) }
                        Thread.sleep(forTimeInterval: 0.01)  // blocking, as a pipeline played to its end blocks
                        return job * 2
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.sorted() == (0..<30).map { $0 * 2 })
        #expect(runner.threadCount <= 3 && runner.threadCount >= 1, "\(runner.threadCount) threads")
        #expect(runner.peakConcurrency <= 3, "\(runner.peakConcurrency) at once")
        #expect(shared.order.withLock { $0.count } == 30)
    }

    @Test("a job's error comes back typed; the runner goes on with the next job")
    func errors() async {
        let runner = PipelineRunner(threads: 1, name: "test-runner")
        await #expect(throws: Refused(job: 7)) {
            try await runner.run { () throws(Refused) -> Int in throw Refused(job: 7) }
        }
        let next = await runner.run { () -> String in "next" }
        #expect(next == "next")
        #expect(runner.threadCount == 1)
    }

    @Test("on one thread, jobs run in the order they were submitted")
    func fifo() async {
        let runner = PipelineRunner(threads: 1, name: "test-runner")
        let shared = Shared()
        // The first job holds the thread until every other job is queued behind it.
        let first = Task {
            await runner.run {
                shared.holding.withLock { $0 = true }
                while !shared.gate.withLock({ $0 }) { Thread.sleep(forTimeInterval: 0.002) }
            }
        }
        while !shared.holding.withLock({ $0 }) { await Task.yield() }
        var queued: [Task<Void, Never>] = []
        for job in 1...5 {
            queued.append(Task { await runner.run { shared.order.withLock { $0.append(job) } } })
            // Submitted one after the other: each is in the queue before the next is made.
            while runner.queuedForTesting < job { await Task.yield() }
        }
        shared.gate.withLock { $0 = true }
        await first.value
        for task in queued { await task.value }
        #expect(shared.order.withLock { $0 } == [1, 2, 3, 4, 5])
    }
}
