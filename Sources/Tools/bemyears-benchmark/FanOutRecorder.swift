import Foundation
import Synchronization

/// Collects, per presence change, when each watching caller first held a PRESENCE that shows it.
final class FanOutRecorder: Sendable {
    private struct State {
        var interpreter = ""
        /// How the interpreter appears in a PRESENCE's text: both servers encode it compactly as
        /// `{"username":"<name>"}` (EnvelopeCodec; JSON.stringify), so a byte search decides without parsing.
        var entry = ""
        var present = false
        var watchers = 0
        var arrivals: [String: Int64] = [:]
    }

    private let state = Mutex(State())

    /// Starts waiting for `interpreter` to appear in (or vanish from) every watcher's PRESENCE.
    func expect(interpreter: String, present: Bool, watchers: Int) {
        state.withLock {
            $0 = State(
                interpreter: interpreter, entry: #""username":"\#(interpreter)""#, present: present, watchers: watchers)
        }
    }

    /// Notes `message` (a PRESENCE) for `watcher` when it shows the expected change. The search runs under the lock
    /// so that a PRESENCE is always judged against the change it is recorded for.
    func record(_ message: LoadClient.Message, watcher: String) {
        state.withLock { state in
            guard !state.interpreter.isEmpty, message.contains(state.entry) == state.present else { return }
            if state.arrivals[watcher] == nil { state.arrivals[watcher] = message.arrived }
        }
    }

    /// The arrival times once every watcher has one (or at `timeout`).
    func wait(timeout: Duration) async -> [Int64] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let done = state.withLock { $0.arrivals.count >= $0.watchers }
            if done { break }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return state.withLock { Array($0.arrivals.values) }
    }
}
