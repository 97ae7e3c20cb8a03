public import ArgusStore
public import Foundation
public import Logging
import Synchronization

/// Events are kept 30 days, whichever camera made them (`--camera` ones and CribCall monitors alike): pruned at the
/// first event of a run, then at most once an hour while events come.
public final class EventRetention: Sendable {
    /// How long events are kept.
    public static let period: TimeInterval = 30 * 86_400
    private let database: ArgusDatabase
    /// When the events were last pruned in this run (nil: not yet).
    private let lastPrune = Mutex<Date?>(nil)
    private let logger: Logger

    public init(database: ArgusDatabase, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    /// Prunes if it is the first time in this run, or an hour has passed since the last.
    public func pruneIfDue(now: Date = Date()) {
        let due = lastPrune.withLock { last in
            guard last.map({ now.timeIntervalSince($0) >= 3600 }) ?? true else { return false }
            last = now
            return true
        }
        guard due else { return }
        do {
            try database.pruneEvents(before: now.addingTimeInterval(-Self.period))
        } catch {
            // Tried again at the next event an hour on; until then the database keeps what it has.
            logger.error("events older than 30 days could not be pruned", metadata: ["reason": "\(error)"])
        }
    }
}
