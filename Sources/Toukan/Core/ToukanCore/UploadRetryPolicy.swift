public import Foundation

/// The seed's retry strategy: exponential backoff from one second, capped at ten minutes; five failures the server
/// is to blame for, then `failed`; an unreachable server never fails a recording.
///
/// The seed lists the waits as 1, 2, 4, 8, 16 s "up to 5 attempts", says an upload that "fails 5 times" is failed,
/// and that a backend that is down is "the same as offline — queue and retry". So only failures the server answered
/// (``UploadFailure/Disposition/counted``) count toward the five: attempt n+1 starts `2^(n-1)` s after failed
/// attempt n (1, 2, 4, 8 s) and the fifth such failure is final (`maximumAttempts: 6` gives the other reading). An
/// unreachable server (``UploadFailure/Disposition/offline``) is tried again and again, the waits doubling up to
/// ``maximumDelay``, until it answers; the network coming back cuts any wait short.
public struct UploadRetryPolicy: Sendable, Hashable {
    /// Counted failures after which a recording is `failed`.
    public var maximumAttempts: Int
    /// The wait after the first failure; it doubles after each further one.
    public var firstDelay: TimeInterval
    /// The longest wait between two attempts (10 minutes).
    public var maximumDelay: TimeInterval

    public init(maximumAttempts: Int = 5, firstDelay: TimeInterval = 1, maximumDelay: TimeInterval = 600) {
        self.maximumAttempts = maximumAttempts
        self.firstDelay = firstDelay
        self.maximumDelay = maximumDelay
    }

    /// The wait after `failures` consecutive failed attempts: 0 before any, then 1, 2, 4, 8… seconds, at most
    /// ``maximumDelay``.
    public func delay(afterFailures failures: Int) -> TimeInterval {
        guard failures > 0 else { return 0 }
        return min(maximumDelay, firstDelay * TimeInterval(1 << min(failures - 1, 30)))
    }
}
