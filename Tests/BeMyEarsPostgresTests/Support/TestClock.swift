import BeMyEarsCore
import Foundation
import Synchronization

/// A clock that moves only when a test says so (call deadlines are compared with it, not with PostgreSQL's clock).
final class TestClock: SignalingClock {
    static let start = Date(timeIntervalSince1970: 1_750_000_000)  // 2025-06-15 15:06:40 UTC, a whole second

    private let current: Mutex<Date>

    init(_ start: Date = TestClock.start) {
        current = Mutex(start)
    }

    var now: Date { current.withLock { $0 } }

    func advance(_ duration: Duration) {
        let parts = duration.components
        let seconds = Double(parts.seconds) + Double(parts.attoseconds) / 1e18
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
    }
}
