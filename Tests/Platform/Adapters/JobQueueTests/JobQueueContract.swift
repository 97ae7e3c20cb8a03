import Foundation
import JobQueue
import Testing

/// What every ``JobQueue`` does, whatever stores it: run by the SQLite tests here and the PostgreSQL ones.
struct JobQueueContract {
    /// A fresh, empty queue and a way to open more handles on the same storage (another process's view).
    struct Fixture: Sendable {
        let queue: any JobQueue
        let shared: @Sendable () async throws -> any JobQueue
        /// Closes what the fixture opened.
        var close: @Sendable () -> Void = {}
    }

    let make: @Sendable () async throws -> Fixture

    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    func claimAndComplete() async throws {
        let fixture = try await make()
        defer { fixture.close() }
        let queue = fixture.queue
        let now = Self.start
        let job = try await queue.enqueue(
            kind: "transcribe", payload: #"{"file":"a.m4a"}"#, key: nil, runAfter: now, now: now)
        #expect(job.state == .queued && job.attempts == 0 && job.payload == #"{"file":"a.m4a"}"#)
        let claimed = try #require(
            try await queue.claim(kinds: ["transcribe"], worker: "w1", lease: .seconds(30), now: now))
        #expect(claimed.id == job.id && claimed.state == .running && claimed.attempts == 1 && claimed.worker == "w1")
        #expect(claimed.leaseUntil == now.addingTimeInterval(30))
        // Held: nobody else gets it.
        #expect(try await queue.claim(kinds: ["transcribe"], worker: "w2", lease: .seconds(30), now: now) == nil)
        try await queue.complete(job.id, worker: "w1", now: now.addingTimeInterval(1))
        let done = try #require(try await queue.job(job.id))
        #expect(done.state == .succeeded && done.leaseUntil == nil)
        #expect(try await queue.counts() == [.succeeded: 1])
        // Ended: completing again is refused.
        await #expect(throws: JobQueueError.self) { try await queue.complete(job.id, worker: "w1", now: now) }
    }

    func dueTimesKindsAndOrder() async throws {
        let fixture = try await make()
        defer { fixture.close() }
        let queue = fixture.queue
        let now = Self.start
        let later = try await queue.enqueue(kind: "a", payload: "later", key: nil, runAfter: now + 60, now: now)
        let second = try await queue.enqueue(kind: "a", payload: "second", key: nil, runAfter: now - 5, now: now)
        let first = try await queue.enqueue(kind: "a", payload: "first", key: nil, runAfter: now - 10, now: now)
        _ = try await queue.enqueue(kind: "b", payload: "other kind", key: nil, runAfter: now - 20, now: now)
        let lease = Duration.seconds(30)
        #expect(try await queue.claim(kinds: ["a"], worker: "w", lease: lease, now: now)?.id == first.id)
        #expect(try await queue.claim(kinds: ["a"], worker: "w", lease: lease, now: now)?.id == second.id)
        #expect(try await queue.claim(kinds: ["a"], worker: "w", lease: lease, now: now) == nil)
        try await queue.complete(first.id, worker: "w", now: now)
        try await queue.complete(second.id, worker: "w", now: now)
        #expect(try await queue.claim(kinds: [], worker: "w", lease: lease, now: now + 120) == nil)
        #expect(try await queue.claim(kinds: ["a"], worker: "w", lease: lease, now: now + 60)?.id == later.id)
        #expect(try await queue.claim(kinds: ["b", "c"], worker: "w", lease: lease, now: now)?.payload == "other kind")
    }

    func keysDeduplicate() async throws {
        let fixture = try await make()
        defer { fixture.close() }
        let queue = fixture.queue
        let now = Self.start
        let one = try await queue.enqueue(kind: "process", payload: "1", key: "memory-7", runAfter: now, now: now)
        let again = try await queue.enqueue(kind: "process", payload: "2", key: "memory-7", runAfter: now, now: now)
        #expect(again == one)
        let otherKind = try await queue.enqueue(kind: "notify", payload: "3", key: "memory-7", runAfter: now, now: now)
        #expect(otherKind.id != one.id)
        // Still deduplicated once it has run.
        _ = try await queue.claim(kinds: ["process"], worker: "w", lease: .seconds(5), now: now)
        try await queue.complete(one.id, worker: "w", now: now)
        #expect(
            try await queue.enqueue(kind: "process", payload: "4", key: "memory-7", runAfter: now, now: now).id
                == one.id)
        #expect(try await queue.counts() == [.succeeded: 1, .queued: 1])
    }

    func lapsedLeases() async throws {
        let fixture = try await make()
        defer { fixture.close() }
        let queue = fixture.queue
        let now = Self.start
        let job = try await queue.enqueue(kind: "k", payload: "", key: nil, runAfter: now, now: now)
        _ = try await queue.claim(kinds: ["k"], worker: "dies", lease: .seconds(30), now: now)
        // Renewed at 20 s: held until 50 s.
        try await queue.renew(job.id, worker: "dies", lease: .seconds(30), now: now + 20)
        #expect(try await queue.claim(kinds: ["k"], worker: "w2", lease: .seconds(30), now: now + 40) == nil)
        // The worker died: at 50 s the lease lapses and another worker takes the job (second attempt).
        let retaken = try #require(
            try await queue.claim(kinds: ["k"], worker: "w2", lease: .seconds(30), now: now + 50))
        #expect(retaken.worker == "w2" && retaken.attempts == 2)
        // The first worker's late result is dropped, with a reason.
        let lost = await #expect(throws: JobQueueError.self) {
            try await queue.complete(job.id, worker: "dies", now: now + 51)
        }
        #expect(lost?.code == .leaseLost)
        await #expect(throws: JobQueueError.self) {
            try await queue.renew(job.id, worker: "dies", lease: .seconds(30), now: now + 51)
        }
        // A holder whose lease ran out cannot finish either, even if nobody claimed the job yet.
        await #expect(throws: JobQueueError.self) { try await queue.complete(job.id, worker: "w2", now: now + 80) }
    }

    func failuresAndRetries() async throws {
        let fixture = try await make()
        defer { fixture.close() }
        let queue = fixture.queue
        let now = Self.start
        let policy = RetryPolicy(maxAttempts: 2, base: .seconds(10), cap: .seconds(60))
        let job = try await queue.enqueue(kind: "k", payload: "", key: nil, runAfter: now, now: now)
        let first = try #require(try await queue.claim(kinds: ["k"], worker: "w", lease: .seconds(30), now: now))
        try await queue.fail(first, worker: "w", error: "decoder crashed", policy: policy, now: now + 1)
        let waiting = try #require(try await queue.job(job.id))
        #expect(waiting.state == .queued && waiting.runAfter == now + 11 && waiting.lastError == "decoder crashed")
        #expect(try await queue.claim(kinds: ["k"], worker: "w", lease: .seconds(30), now: now + 10) == nil)
        let second = try #require(try await queue.claim(kinds: ["k"], worker: "w", lease: .seconds(30), now: now + 11))
        #expect(second.attempts == 2)
        try await queue.fail(
            second, worker: "w", error: String(repeating: "x", count: 10_000), policy: policy, now: now + 12)
        let failed = try #require(try await queue.job(job.id))
        #expect(failed.state == .failed && failed.lastError?.utf8.count == JobQueueLimits.maxErrorBytes)
        #expect(try await queue.claim(kinds: ["k"], worker: "w", lease: .seconds(30), now: now + 1_000) == nil)
        // A person asks again: queued at once, attempts from zero.
        try await queue.retry(job.id, now: now + 100)
        let again = try #require(try await queue.claim(kinds: ["k"], worker: "w", lease: .seconds(30), now: now + 100))
        #expect(again.attempts == 1)
        await #expect(throws: JobQueueError.self) { try await queue.retry(job.id, now: now + 100) }
        let missing = await #expect(throws: JobQueueError.self) { try await queue.retry(999_999, now: now) }
        #expect(missing?.code == .notFound)
    }

    func bounds() async throws {
        let fixture = try await make()
        defer { fixture.close() }
        let queue = fixture.queue
        let now = Self.start
        for (kind, payload, key) in [
            ("", "", nil), (String(repeating: "k", count: 65), "", nil),
            ("k", String(repeating: "p", count: JobQueueLimits.maxPayloadBytes + 1), nil),
            ("k", "", String(repeating: "y", count: 257)), ("k", "", ""),
        ] as [(String, String, String?)] {
            let refused = await #expect(throws: JobQueueError.self) {
                try await queue.enqueue(kind: kind, payload: payload, key: key, runAfter: now, now: now)
            }
            #expect(refused?.code == .invalidArgument)
        }
        #expect(try await queue.counts().isEmpty)
    }

    /// Many workers on their own handles (as separate processes would be) drain one queue: every job runs exactly
    /// once.
    func concurrentWorkersClaimEachJobOnce(jobs: Int = 120, workers: Int = 6) async throws {
        let fixture = try await make()
        defer { fixture.close() }
        let (queue, shared) = (fixture.queue, fixture.shared)
        let now = Self.start
        for index in 0..<jobs {
            _ = try await queue.enqueue(kind: "k", payload: "\(index)", key: nil, runAfter: now, now: now)
        }
        let done = try await withThrowingTaskGroup(of: [String].self) { group in
            for worker in 0..<workers {
                group.addTask {
                    let handle = try await shared()
                    var payloads: [String] = []
                    while let job = try await handle.claim(
                        kinds: ["k"], worker: "w\(worker)", lease: .seconds(600), now: now)
                    {
                        try await handle.complete(job.id, worker: "w\(worker)", now: now)
                        payloads.append(job.payload)
                    }
                    return payloads
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(done.count == jobs)
        #expect(Set(done) == Set((0..<jobs).map(String.init)))
        #expect(try await queue.counts() == [.succeeded: jobs])
    }
}
