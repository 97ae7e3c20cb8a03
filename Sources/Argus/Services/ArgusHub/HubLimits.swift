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

    private var limiters: [String: AttemptLimiter] = [:]
    private var failures = AttemptLimiter(limit: failedVerifies.limit, window: failedVerifies.window, capacity: 4096)

    /// Counts one call of `operation` by `key`; the seconds to wait when it is over its limit (nil: go ahead).
    func admit(_ operation: String, key: String, now: Date) -> Int? {
        guard let rule = Self.rules[operation] else { return nil }
        var limiter = limiters[operation] ?? AttemptLimiter(limit: rule.limit, window: rule.window, capacity: 4096)
        defer { limiters[operation] = limiter }
        if let wait = limiter.retryAfter(key, now: now) { return wait }
        limiter.record(key, now: now)
        return nil
    }

    /// How long `client` must wait before verifying again (nil: it may).
    func verifyWait(client: String, now: Date) -> Int? { failures.retryAfter(client, now: now) }

    func verifyFailed(client: String, now: Date) { failures.record(client, now: now) }
}
