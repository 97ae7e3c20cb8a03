public import CribCallMonitor
import Synchronization

/// A ``StreamClock`` that stands still until the test advances it: automatic streams of a valid length (5...600 s)
/// run in no real time, and every deadline is met exactly, so `secondsRemaining` is exact.
public final class ManualStreamClock: StreamClock {
    private struct Sleeper {
        let deadline: ContinuousClock.Instant
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        public var now: ContinuousClock.Instant
        var sleepers: [UInt64: Sleeper] = [:]
        var nextId: UInt64 = 0
    }

    private let state = Mutex(State(now: ContinuousClock.now))

    public init() {}

    public var now: ContinuousClock.Instant {
        state.withLock { $0.now }
    }

    /// Moves time forward and wakes every sleeper whose deadline has come.
    public func advance(by duration: Duration) {
        let due = state.withLock { state in
            state.now += duration
            let now = state.now
            let ids = state.sleepers.filter { $0.value.deadline <= now }.keys
            return ids.compactMap { state.sleepers.removeValue(forKey: $0)?.continuation }
        }
        for continuation in due { continuation.resume() }
    }

    public func sleep(until deadline: ContinuousClock.Instant) async throws {
        let id = state.withLock { state in
            state.nextId += 1
            return state.nextId
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let result: Result<Void, any Error>? = state.withLock { state in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if state.now >= deadline { return .success(()) }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return nil
                }
                if let result { continuation.resume(with: result) }
            }
        } onCancel: {
            state.withLock { $0.sleepers.removeValue(forKey: id) }?.continuation.resume(throwing: CancellationError())
        }
    }
}
