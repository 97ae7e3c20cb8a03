public import Foundation

/// The time, injected so that tests drive every timer without sleeping.
///
/// Wall-clock time (`Date`), not a monotonic instant: call deadlines are stored with the call and compared by
/// every node of a shared store, so they need a time that means the same on all of them.
public protocol SignalingClock: Sendable {
    /// The current time.
    var now: Date { get }
}
