import BeMyEarsCore
import Synchronization

extension CallID {
    /// 00000000-0000-4000-8000-00000000000n: valid version 4 UUIDs in a predictable order.
    init(testNumber: Int) {
        let hex = String(testNumber, radix: 16)
        self.init("00000000-0000-4000-8000-" + String(repeating: "0", count: 12 - hex.count) + hex)!
    }
}

extension CallIDGenerator {
    /// Sequential callIds from `first` on (each test node gets its own range so two nodes never collide).
    static func sequential(from first: Int) -> CallIDGenerator {
        let counter = Mutex(first - 1)
        return CallIDGenerator {
            CallID(testNumber: counter.withLock { value in
                value += 1
                return value
            })
        }
    }
}
