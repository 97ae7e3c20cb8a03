import Synchronization

/// The first of several competing outcomes (work finished, a deadline passed, the caller was cancelled), for waits
/// that must end on time even when the work does not: the losers are simply ignored.
final class FirstOutcome<Value: Sendable>: Sendable {
    private struct State {
        var waiter: CheckedContinuation<Result<Value, any Error>, Never>?
        var result: Result<Value, any Error>?
        var reachedListening = false
    }

    private let state = Mutex(State())

    /// Whether a supervised `LISTEN` session got as far as listening.
    var reachedListening: Bool { state.withLock { $0.reachedListening } }

    func markListening() {
        state.withLock { $0.reachedListening = true }
    }

    /// Records `result` unless an outcome came first, and wakes the waiter.
    func resolve(_ result: Result<Value, any Error>) {
        let waiter = state.withLock { state -> CheckedContinuation<Result<Value, any Error>, Never>? in
            guard state.result == nil else { return nil }
            state.result = result
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: result)
    }

    /// The first outcome.
    func wait() async -> Result<Value, any Error> {
        await withCheckedContinuation { continuation in
            let result = state.withLock { state -> Result<Value, any Error>? in
                if let result = state.result { return result }
                state.waiter = continuation
                return nil
            }
            if let result { continuation.resume(returning: result) }
        }
    }
}
