import BeMyEarsCore
import Foundation
import Synchronization

/// A clock that only moves when a test says so.
final class ManualClock: SignalingClock {
    static let start = Date(timeIntervalSince1970: 1_750_000_000)  // 2025-06-15 15:06:40 UTC

    private let current: Mutex<Date>

    init(_ start: Date = ManualClock.start) {
        current = Mutex(start)
    }

    var now: Date { current.withLock { $0 } }

    func advance(_ duration: Duration) {
        let parts = duration.components
        let seconds = Double(parts.seconds) + Double(parts.attoseconds) / 1e18
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
    }
}

extension CallIDGenerator {
    /// 00000000-0000-4000-8000-000000000001, …: valid version 4 UUIDs in a predictable order.
    static func sequential() -> CallIDGenerator {
        let counter = Mutex(0)
        return CallIDGenerator {
            let next = counter.withLock { value in
                value += 1
                return value
            }
            return CallID(testNumber: next)
        }
    }
}

extension CallID {
    init(testNumber: Int) {
        let hex = String(testNumber, radix: 16)
        self.init("00000000-0000-4000-8000-" + String(repeating: "0", count: 12 - hex.count) + hex)!
    }
}
