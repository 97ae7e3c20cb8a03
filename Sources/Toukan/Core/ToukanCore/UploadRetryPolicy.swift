public import Foundation

/// The seed's retry strategy: exponential backoff from one second, five attempts, then `failed`.
///
/// The seed lists the waits as 1, 2, 4, 8, 16 s "up to 5 attempts" and, among its edge cases, "Upload fails 5 times
/// → mark as failed". We keep the second, the rule a person sees: attempt n+1 starts `2^(n-1)` s after failed
/// attempt n (1, 2, 4, 8 s), and the fifth failure is final, so the 16 s wait would only follow a sixth attempt
/// that never comes. `maximumAttempts: 6` gives the other reading.
public struct UploadRetryPolicy: Sendable, Hashable {
    /// Failed attempts after which a recording is `failed`.
    public var maximumAttempts: Int
    /// The wait after the first failure; it doubles after each further one.
    public var firstDelay: TimeInterval

    public init(maximumAttempts: Int = 5, firstDelay: TimeInterval = 1) {
        self.maximumAttempts = maximumAttempts
        self.firstDelay = firstDelay
    }

    /// The wait after `failures` failed attempts: 0 before any, then 1, 2, 4, 8… seconds.
    public func delay(afterFailures failures: Int) -> TimeInterval {
        guard failures > 0 else { return 0 }
        return firstDelay * TimeInterval(1 << min(failures - 1, 30))
    }
}
