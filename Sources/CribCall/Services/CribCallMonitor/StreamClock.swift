/// The monotonic time the monitor's automatic streams run on (PROTOCOL.md §9: STREAM_ENDING_SOON, auto-stop).
///
/// `StreamSessions` takes instants as arguments; the service asks this clock for them and sleeps on it until the
/// next deadline. Production uses ``SystemStreamClock``; tests inject a clock they advance by hand, so an automatic
/// stream of a valid length (5...600 s) is tested in milliseconds and without timed assertions.
public protocol StreamClock: Sendable {
    /// The current instant.
    var now: ContinuousClock.Instant { get }
    /// Suspends until `deadline` (at once if it has passed).
    /// - Throws: `CancellationError` when the task is cancelled meanwhile.
    func sleep(until deadline: ContinuousClock.Instant) async throws
}

/// ``StreamClock`` on the system's `ContinuousClock`.
public struct SystemStreamClock: StreamClock {
    /// Creates the clock.
    public init() {}

    /// `ContinuousClock.now`.
    public var now: ContinuousClock.Instant { .now }

    /// Sleeps on `ContinuousClock`.
    /// - Throws: `CancellationError` when the task is cancelled meanwhile.
    public func sleep(until deadline: ContinuousClock.Instant) async throws {
        try await Task.sleep(until: deadline, clock: .continuous)
    }
}
