public import Foundation

/// A persistent queue of background jobs that several workers — in one process or several — share: each job is
/// claimed by one worker at a time, a worker that dies loses its claim when the lease runs out, and a failure is
/// retried by a ``RetryPolicy`` until it succeeds or gives up.
///
/// Implementations: ``SQLiteJobQueue`` (one machine; several processes on one file), and the PostgreSQL one
/// (several machines; claims with `FOR UPDATE SKIP LOCKED`). Both pass the same contract tests.
public protocol JobQueue: Sendable {
    /// Adds a job, runnable from `runAfter`. With a `key`, a job of the same kind and key already present (in any
    /// state) is returned instead, so a repeated request never does the work twice.
    func enqueue(kind: String, payload: String, key: String?, runAfter: Date, now: Date) async throws -> Job

    /// The oldest runnable job of one of `kinds` (queued and due, or running with a lapsed lease), now held by
    /// `worker` until `now + lease`; nil when there is none.
    func claim(kinds: [String], worker: String, lease: Duration, now: Date) async throws -> Job?

    /// Extends the claim of a job still held by `worker`; throws ``JobQueueError/Code/leaseLost`` otherwise.
    func renew(_ id: Int64, worker: String, lease: Duration, now: Date) async throws

    /// Marks a job held by `worker` as succeeded.
    func complete(_ id: Int64, worker: String, now: Date) async throws

    /// Records a failed attempt of a job held by `worker`: queued again at `retryAt`, or failed for good when nil.
    func fail(_ id: Int64, worker: String, error: String, retryAt: Date?, now: Date) async throws

    /// Queues a failed job again (a person asked), with its attempts reset.
    func retry(_ id: Int64, now: Date) async throws

    /// The job with this id, if any.
    func job(_ id: Int64) async throws -> Job?

    /// How many jobs are in each state.
    func counts() async throws -> [Job.State: Int]
}

extension JobQueue {
    /// Records a failed attempt, retried as `policy` says.
    public func fail(_ job: Job, worker: String, error: String, policy: RetryPolicy, now: Date) async throws {
        try await fail(
            job.id, worker: worker, error: error, retryAt: policy.retryTime(afterAttempt: job.attempts, now: now),
            now: now)
    }
}

extension Duration {
    /// The duration in seconds, as a `TimeInterval`.
    var timeInterval: TimeInterval {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
