public import ArgusStore
public import Foundation
import Synchronization

/// Events are kept 30 days, whichever camera made them (`--camera` ones and CribCall monitors alike): pruned at the
/// first event of a run, then at most once an hour while events come.
public final class EventRetention: Sendable {
    /// How long events are kept.
    public static let period: TimeInterval = 30 * 86_400
    private let database: ArgusDatabase
    /// When the events were last pruned in this run (nil: not yet).
    private let lastPrune = Mutex<Date?>(nil)

    public init(database: ArgusDatabase) {
        self.database = database
    }

    /// Prunes if it is the first time in this run, or an hour has passed since the last.
    public func pruneIfDue(now: Date = Date()) {
        let due = lastPrune.withLock { last in
            guard last.map({ now.timeIntervalSince($0) >= 3600 }) ?? true else { return false }
            last = now
            return true
        }
        if due { try? database.pruneEvents(before: now.addingTimeInterval(-Self.period)) }
    }
}
