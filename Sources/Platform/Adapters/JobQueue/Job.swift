public import Foundation

/// One unit of background work in a ``JobQueue``: what to do (`kind` and a `payload` the worker understands), and
/// where it stands.
public struct Job: Sendable, Hashable {
    /// Where a job stands.
    public enum State: String, Sendable, Hashable, CaseIterable {
        /// Waiting until ``Job/runAfter`` (new, or retrying after a failure).
        case queued
        /// Claimed by ``Job/worker`` until ``Job/leaseUntil``; a lease that runs out means the worker died, and the
        /// job is claimed again.
        case running
        /// Done.
        case succeeded
        /// Given up: it failed ``Job/attempts`` times, or failed in a way no retry can help.
        case failed
    }

    public var id: Int64
    /// What the job does, e.g. `transcribe`; a worker claims only the kinds it knows.
    public var kind: String
    /// The worker's input, as text (JSON by convention), at most ``JobQueueLimits/maxPayloadBytes``.
    public var payload: String
    /// Set once per kind: a second enqueue with the same key returns the first job instead of adding one.
    public var key: String?
    public var state: State
    /// How many times the job was claimed (so far, including the current claim).
    public var attempts: Int
    /// Not claimed before this time.
    public var runAfter: Date
    /// Who holds the job while it runs.
    public var worker: String?
    /// While running: when the claim lapses if the worker neither finishes nor renews it.
    public var leaseUntil: Date?
    /// Why the last attempt failed.
    public var lastError: String?
    public var createdAt: Date
    public var updatedAt: Date

    public init(
        id: Int64, kind: String, payload: String, key: String?, state: State, attempts: Int, runAfter: Date,
        worker: String?, leaseUntil: Date?, lastError: String?, createdAt: Date, updatedAt: Date
    ) {
        self.id = id
        self.kind = kind
        self.payload = payload
        self.key = key
        self.state = state
        self.attempts = attempts
        self.runAfter = runAfter
        self.worker = worker
        self.leaseUntil = leaseUntil
        self.lastError = lastError
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// Bounds on what a queue accepts, so a caller's mistake cannot fill the disk.
public enum JobQueueLimits {
    public static let maxKindBytes = 64
    public static let maxKeyBytes = 256
    public static let maxPayloadBytes = 64 * 1024
    public static let maxWorkerBytes = 128
    public static let maxErrorBytes = 2_048
}

/// When a failed job runs again: exponential backoff from ``base`` doubling up to ``cap``, and no more after
/// ``maxAttempts`` attempts.
public struct RetryPolicy: Sendable, Hashable {
    public var maxAttempts: Int
    public var base: Duration
    public var cap: Duration

    public init(maxAttempts: Int = 5, base: Duration = .seconds(5), cap: Duration = .seconds(600)) {
        self.maxAttempts = max(1, maxAttempts)
        self.base = base
        self.cap = cap
    }

    /// When a job that has now failed its `attempts`-th attempt runs again, or nil when it has had all of them.
    public func retryTime(afterAttempt attempts: Int, now: Date) -> Date? {
        guard attempts < maxAttempts else { return nil }
        let exponent = min(max(attempts - 1, 0), 30)
        let delay = min(base * (1 << exponent), cap)
        return now.addingTimeInterval(delay.timeInterval)
    }
}

/// A queue refused a request; the message says what to change.
public struct JobQueueError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: Sendable, Hashable {
        /// Kind, key, payload, worker or error text out of bounds.
        case invalidArgument
        /// The job is not held by this worker any more (its lease ran out and another worker claimed it, or it
        /// ended): the result is dropped, the other claim stands.
        case leaseLost
        /// No job has this id.
        case notFound
        /// The database cannot be opened or used.
        case unavailable
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }

    static func checkBounds(_ field: String, _ value: String, max: Int) throws(JobQueueError) {
        guard !value.isEmpty || field == "payload", value.utf8.count <= max else {
            throw JobQueueError(.invalidArgument, "The job's \(field) must be 1 to \(max) bytes long.")
        }
    }

    static func leaseLost(_ id: Int64, worker: String) -> JobQueueError {
        JobQueueError(
            .leaseLost,
            "Job \(id) is no longer held by \(worker) (its lease ran out and it was claimed again, or it ended); "
                + "the result was dropped.")
    }
}
