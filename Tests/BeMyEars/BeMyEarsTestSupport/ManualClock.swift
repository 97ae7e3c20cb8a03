public import BeMyEarsCore
public import Foundation
import Synchronization

/// A ``SignalingClock`` that moves only when a test says so (call deadlines are compared with it, not with the
/// machine's or PostgreSQL's clock).
public final class ManualClock: SignalingClock {
    /// 2025-06-15 15:06:40 UTC, a whole second.
    public static let start = Date(timeIntervalSince1970: 1_750_000_000)

    private let current: Mutex<Date>

    public init(_ start: Date = ManualClock.start) {
        current = Mutex(start)
    }

    public var now: Date { current.withLock { $0 } }

    public func advance(_ duration: Duration) {
        let parts = duration.components
        let seconds = Double(parts.seconds) + Double(parts.attoseconds) / 1e18
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
    }
}

extension CallIDGenerator {
    /// Sequential callIds from `first` on: valid version 4 UUIDs in a predictable order (give each test node its
    /// own range so two nodes never collide).
    public static func sequential(from first: Int = 1) -> CallIDGenerator {
        let counter = Mutex(first - 1)
        return CallIDGenerator {
            CallID(
                testNumber: counter.withLock { value in
                    value += 1
                    return value
                })
        }
    }
}

extension CallID {
    /// 00000000-0000-4000-8000-00000000000n.
    public init(testNumber: Int) {
        let hex = String(testNumber, radix: 16)
        self.init("00000000-0000-4000-8000-" + String(repeating: "0", count: 12 - hex.count) + hex)!
    }
}

extension SignalingConfiguration {
    /// The protocol's values, but every PRESENCE is sent at once: for tests on a ``ManualClock`` that check what
    /// each change sends without advancing time (coalescing has tests of its own).
    public static let immediatePresence: SignalingConfiguration = {
        var configuration = SignalingConfiguration.standard
        configuration.presenceInterval = .zero
        return configuration
    }()
}
