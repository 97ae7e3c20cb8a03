public import Foundation

/// Counts attempts (failures, or requests) per key (a client address, a device) in a sliding window and says how long a key must wait
/// once it has had `limit` of them. Bounded: at most `capacity` keys are remembered (the oldest are forgotten
/// first), so a flood of addresses cannot grow the hub's memory.
public struct AttemptLimiter: Sendable {
    public let limit: Int
    public let window: TimeInterval
    public let capacity: Int
    private var failures: [String: [Date]] = [:]
    private var order: [String] = []

    public init(limit: Int, window: TimeInterval, capacity: Int = 10_000) {
        self.limit = limit
        self.window = window
        self.capacity = capacity
    }

    /// Seconds `key` must wait before trying again at `now` (nil: it may try).
    public mutating func retryAfter(_ key: String, now: Date) -> Int? {
        let recent = prune(key, now: now)
        guard recent.count >= limit, let oldest = recent.first else { return nil }
        return max(1, Int((oldest.addingTimeInterval(window).timeIntervalSince(now)).rounded(.up)))
    }

    /// One more attempt (a failure, or a request where every request counts) of `key` at `now`.
    public mutating func record(_ key: String, now: Date) {
        var recent = prune(key, now: now)
        if failures[key] == nil {
            order.append(key)
            if order.count > capacity {
                let forgotten = order.removeFirst()
                failures[forgotten] = nil
            }
        }
        recent.append(now)
        failures[key] = Array(recent.suffix(limit))
    }

    /// Forgets `key`'s failures (a success).
    public mutating func reset(_ key: String) {
        guard failures.removeValue(forKey: key) != nil else { return }
        order.removeAll { $0 == key }
    }

    private mutating func prune(_ key: String, now: Date) -> [Date] {
        let recent = (failures[key] ?? []).filter { now.timeIntervalSince($0) < window }
        if failures[key] != nil { failures[key] = recent }
        return recent
    }
}
