import ArgusAuth
import Foundation
import Testing

@Suite("Failures per client in a sliding window")
struct AttemptLimiterTests {
    let start = Date(timeIntervalSince1970: 1_795_000_000)

    @Test("the limit-th failure makes the key wait until its oldest failure leaves the window")
    func limit() {
        var limiter = AttemptLimiter(limit: 3, window: 60)
        #expect(limiter.retryAfter("10.0.0.9", now: start) == nil)
        limiter.record("10.0.0.9", now: start)
        limiter.record("10.0.0.9", now: start.addingTimeInterval(10))
        #expect(limiter.retryAfter("10.0.0.9", now: start.addingTimeInterval(11)) == nil)
        limiter.record("10.0.0.9", now: start.addingTimeInterval(20))
        #expect(limiter.retryAfter("10.0.0.9", now: start.addingTimeInterval(21)) == 39)
        #expect(limiter.retryAfter("10.0.0.8", now: start.addingTimeInterval(21)) == nil, "another client")
        #expect(limiter.retryAfter("10.0.0.9", now: start.addingTimeInterval(60)) == nil, "the first one left")
        limiter.reset("10.0.0.9")
        limiter.record("10.0.0.9", now: start.addingTimeInterval(61))
        #expect(limiter.retryAfter("10.0.0.9", now: start.addingTimeInterval(61)) == nil)
    }

    @Test("a flood of addresses is forgotten oldest first, within its capacity")
    func bounded() {
        var limiter = AttemptLimiter(limit: 1, window: 600, capacity: 100)
        for index in 0..<1000 { limiter.record("10.0.\(index / 256).\(index % 256)", now: start) }
        #expect(limiter.retryAfter("10.0.3.231", now: start) != nil, "the latest is remembered")
        #expect(limiter.retryAfter("10.0.0.0", now: start) == nil, "the first was forgotten")
    }
}
