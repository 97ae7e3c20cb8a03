public import Foundation

/// A token bucket's parameters.
public struct RateLimit: Sendable, Hashable {
    /// Tokens added per second.
    public var messagesPerSecond: Double
    /// Bucket size: the most messages accepted at once after a quiet period.
    public var burst: Int

    public init(messagesPerSecond: Double = 50, burst: Int = 100) {
        self.messagesPerSecond = messagesPerSecond
        self.burst = burst
    }

    /// "50 per second (bursts of 100)".
    var summary: String {
        let rate =
            messagesPerSecond == messagesPerSecond.rounded() && abs(messagesPerSecond) < 1e15
            ? String(Int(messagesPerSecond)) : String(messagesPerSecond)
        return "\(rate) messages per second (bursts of \(burst))"
    }
}

/// The per-session rate limit: one token per message, refilled continuously. Pure: the time is passed in.
public struct TokenBucket: Sendable, Hashable {
    public let limit: RateLimit
    private var tokens: Double
    private var updatedAt: Date

    /// A full bucket at `now`.
    public init(_ limit: RateLimit, now: Date) {
        self.limit = limit
        self.tokens = Double(limit.burst)
        self.updatedAt = now
    }

    /// Tokens available at the last update.
    public var available: Double { tokens }

    /// Takes a token for a message arriving at `now`; false when the bucket is empty (the message is refused).
    /// A clock that goes backwards adds nothing.
    public mutating func take(at now: Date) -> Bool {
        if now > updatedAt {
            let elapsed = now.timeIntervalSince(updatedAt)
            tokens = min(Double(limit.burst), tokens + elapsed * limit.messagesPerSecond)
            updatedAt = now
        }
        // `Date` arithmetic far from 2001 carries ~1e-7 s of rounding; don't let it eat a whole token.
        guard tokens >= 1 - 1e-6 else { return false }
        tokens = max(0, tokens - 1)
        return true
    }
}
