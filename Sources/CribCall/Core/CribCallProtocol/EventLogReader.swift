public import Foundation

/// How a listener takes a monitor's events over one connection (PROTOCOL.md §8): it asks `EVENTS_SINCE {since}`,
/// the monitor replays what its log still keeps after `since` (in order, before anything live it queues later),
/// and live events follow.
///
/// - Each `seq` is shown once per connection, also when a live event and the replay overlap; nothing at or before
///   `since` is shown again.
/// - The log's `seq` has no holes (one counter for every noise event and safety alert), so a first replayed `seq`
///   beyond `since + 1` means the monitor no longer keeps the ones between: ``Verdict/notKept`` says how many.
/// - A new pairing (nothing received yet, `since` 0) starts at the monitor's present: what it logged before the
///   pairing is recorded as seen, not shown as missed.
public struct EventLogReader: Sendable {
    /// What to do with one event.
    public struct Verdict: Sendable, Hashable {
        /// Tell the user.
        public var show: Bool
        /// Count it as received (the next `EVENTS_SINCE` starts after the highest).
        public var record: Bool
        /// Events between `since` and this one that the monitor no longer keeps (only on the first replayed one).
        public var notKept: Int64
    }

    private let since: Int64
    private let pairedAtMilliseconds: Int64
    private var taken: Set<Int64> = []
    private var replayStarted = false
    /// How many `seq`s are remembered per connection before the oldest are let go (live events only go up).
    static let memory = 4096

    /// - Parameters:
    ///   - since: The `afterSeq` this connection asked for.
    ///   - pairedAt: When this listener paired with the monitor.
    public init(since: Int64, pairedAt: Date) {
        self.since = since
        pairedAtMilliseconds = Int64((pairedAt.timeIntervalSince1970 * 1000).rounded(.down))
    }

    /// Takes one event of the log: its `seq`, whether it is replayed, and its time (milliseconds, monitor's clock).
    public mutating func take(seq: Int64, replayed: Bool, at timestamp: Int64) -> Verdict {
        var notKept: Int64 = 0
        if replayed && !replayStarted {
            replayStarted = true
            if since > 0 && seq > since + 1 { notKept = seq - since - 1 }
        }
        guard seq > since, taken.insert(seq).inserted else {
            return Verdict(show: false, record: false, notKept: notKept)
        }
        if taken.count > Self.memory { taken = Set(taken.sorted().suffix(Self.memory / 2)) }
        if replayed && since == 0 && timestamp < pairedAtMilliseconds {
            return Verdict(show: false, record: true, notKept: 0)
        }
        return Verdict(show: true, record: true, notKept: notKept)
    }
}
