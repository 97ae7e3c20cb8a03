import BeMyEarsCore
import BeMyEarsTestSupport
import Foundation
import Testing

@Suite("Token bucket: 50 messages per second, burst 100")
struct TokenBucketTests {
    let start = ManualClock.start

    @Test("a full bucket takes a burst of 100, then refuses")
    func burst() {
        var bucket = TokenBucket(RateLimit(), now: start)
        for index in 0..<100 {
            let taken = bucket.take(at: start)
            #expect(taken, "message \(index)")
        }
        let refused = bucket.take(at: start)
        #expect(!refused)
    }

    @Test("tokens refill at 50 per second", arguments: [0.1, 0.5, 1.0])
    func refill(seconds: Double) {
        var bucket = TokenBucket(RateLimit(), now: start)
        for _ in 0..<100 { _ = bucket.take(at: start) }
        let later = start.addingTimeInterval(seconds)
        let expected = Int((seconds * 50).rounded())
        var accepted = 0
        while bucket.take(at: later) { accepted += 1 }
        #expect(accepted == expected)
    }

    @Test("refill never exceeds the burst")
    func capped() {
        var bucket = TokenBucket(RateLimit(), now: start)
        let muchLater = start.addingTimeInterval(3600)
        var accepted = 0
        while bucket.take(at: muchLater) { accepted += 1 }
        #expect(accepted == 100)
    }

    @Test("a clock going backwards adds no tokens")
    func backwards() {
        var bucket = TokenBucket(RateLimit(), now: start)
        for _ in 0..<100 { _ = bucket.take(at: start) }
        let earlier = bucket.take(at: start.addingTimeInterval(-10))
        let again = bucket.take(at: start)
        #expect(!earlier)
        #expect(!again)
    }

    @Test("a steady 50 messages per second is always accepted")
    func steadyRate() {
        var bucket = TokenBucket(RateLimit(), now: start)
        for _ in 0..<100 { _ = bucket.take(at: start) }
        for index in 1...500 {
            let taken = bucket.take(at: start.addingTimeInterval(Double(index) * 0.02))
            #expect(taken, "message \(index)")
        }
    }
}
