import ArgusAuth
import Foundation

/// The rate limits of docs/api/mobile-api.yaml (`x-rate-limit` of each operation), kept per client address or per
/// device, and the wrong-guess limit of verification per client. One actor, bounded memory (``AttemptLimiter``).
actor HubLimits {
    enum Scope: Sendable { case client, device }

    struct Rule: Sendable {
        let limit: Int
        let window: TimeInterval
        let scope: Scope
    }

    static let rules: [String: Rule] = [
        "getHealth": Rule(limit: 120, window: 60, scope: .client),
        "createPairingCode": Rule(limit: 30, window: 3600, scope: .client),
        "refreshTokens": Rule(limit: 30, window: 3600, scope: .device),
        "listEvents": Rule(limit: 120, window: 60, scope: .device),
        "recentEvents": Rule(limit: 60, window: 60, scope: .device),
        "getEvent": Rule(limit: 120, window: 60, scope: .device),
        "getEventThumbnail": Rule(limit: 600, window: 60, scope: .device),
        "listCameras": Rule(limit: 60, window: 60, scope: .device),
        "getCameraSnapshot": Rule(limit: 60, window: 60, scope: .device),
        "registerPushToken": Rule(limit: 10, window: 3600, scope: .device),
        "unregisterPushToken": Rule(limit: 10, window: 3600, scope: .device),
    ]
    /// Failed verifications per client: 10 in 15 minutes.
    static let failedVerifies = Rule(limit: 10, window: 900, scope: .client)
    /// Refused refreshes per client: 30 in 15 minutes, then 429 for refused ones. A refresh is charged to its device
    /// (``rules``) only once its token is verified, and a valid token is never refused for its client's failures,
    /// so nobody who lacks the device's refresh token can use up the device's allowance or lock it out.
    static let refusedRefreshes = Rule(limit: 30, window: 900, scope: .client)

    private var limiters: [String: AttemptLimiter] = [:]
    private var failures = AttemptLimiter(limit: failedVerifies.limit, window: failedVerifies.window, capacity: 4096)
    private var refusals = AttemptLimiter(
        limit: refusedRefreshes.limit, window: refusedRefreshes.window, capacity: 4096)

    /// Counts one call of `operation` by `key`; the seconds to wait when it is over its limit (nil: go ahead).
    func admit(_ operation: String, key: String, now: Date) -> Int? {
        guard let rule = Self.rules[operation] else { return nil }
        var limiter = limiters[operation] ?? AttemptLimiter(limit: rule.limit, window: rule.window, capacity: 4096)
        defer { limiters[operation] = limiter }
        if let wait = limiter.retryAfter(key, now: now) { return wait }
        limiter.record(key, now: now)
        return nil
    }

    /// How long `key` must wait before its next `operation` (nil: it may), without counting this look.
    func wait(_ operation: String, key: String, now: Date) -> Int? {
        guard let rule = Self.rules[operation] else { return nil }
        var limiter = limiters[operation] ?? AttemptLimiter(limit: rule.limit, window: rule.window, capacity: 4096)
        defer { limiters[operation] = limiter }
        return limiter.retryAfter(key, now: now)
    }

    /// Counts one `operation` of `key` that was carried out (its caller proved who it is).
    func charge(_ operation: String, key: String, now: Date) {
        guard let rule = Self.rules[operation] else { return }
        var limiter = limiters[operation] ?? AttemptLimiter(limit: rule.limit, window: rule.window, capacity: 4096)
        limiter.record(key, now: now)
        limiters[operation] = limiter
    }

    /// How long `client` must wait before refreshing again after refused refreshes (nil: it may).
    func refreshWait(client: String, now: Date) -> Int? { refusals.retryAfter(client, now: now) }

    func refreshRefused(client: String, now: Date) { refusals.record(client, now: now) }

    /// How long `client` must wait before verifying again (nil: it may).
    func verifyWait(client: String, now: Date) -> Int? { failures.retryAfter(client, now: now) }

    func verifyFailed(client: String, now: Date) { failures.record(client, now: now) }
}
