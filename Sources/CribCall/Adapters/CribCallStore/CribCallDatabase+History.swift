public import Foundation
public import GRDB

/// When the monitor ran, one row per run: its start, the last time it was seen alive (so a run cut by a power loss
/// still has an end), and its end.
public struct MonitoringSessionRecord: Sendable, Hashable, Codable, FetchableRecord {
    public var id: Int64
    /// Milliseconds since the Unix epoch.
    public var startedAt: Int64
    public var lastSeenAt: Int64
    /// Nil while the run goes on (or when it was cut: then ``lastSeenAt`` is its end).
    public var endedAt: Int64?

    public init(id: Int64, startedAt: Int64, lastSeenAt: Int64, endedAt: Int64?) {
        self.id = id
        self.startedAt = startedAt
        self.lastSeenAt = lastSeenAt
        self.endedAt = endedAt
    }
}

/// How an alert ended: the latest ALERT_UPDATED for it (PROTOCOL.md §11).
public struct AlertUpdateRecord: Sendable, Hashable, Codable, FetchableRecord {
    public var alertId: String
    /// `checking`, `okay` or `muted`.
    public var state: String
    /// Who acted (a listener's name, or "this monitor").
    public var byName: String
    /// Milliseconds since the Unix epoch.
    public var at: Int64
    public var mutedUntil: Int64?

    public init(alertId: String, state: String, byName: String, at: Int64, mutedUntil: Int64?) {
        self.alertId = alertId
        self.state = state
        self.byName = byName
        self.at = at
        self.mutedUntil = mutedUntil
    }
}

extension CribCallDatabase {
    /// Records that monitoring started at `timestamp` (ms); earlier runs that never said they ended end where they
    /// were last seen.
    /// - Returns: The run's id, for ``touchMonitoringSession(id:at:)`` and ``endMonitoringSession(id:at:)``.
    public func beginMonitoringSession(at timestamp: Int64) throws -> Int64 {
        try writer.write { db in
            try db.execute(sql: "UPDATE monitoringSession SET endedAt = lastSeenAt WHERE endedAt IS NULL")
            try db.execute(
                sql: "INSERT INTO monitoringSession (startedAt, lastSeenAt) VALUES (?, ?)",
                arguments: [timestamp, timestamp])
            return db.lastInsertedRowID
        }
    }

    /// The run is still going at `timestamp` (ms).
    public func touchMonitoringSession(id: Int64, at timestamp: Int64) throws {
        try writer.write { db in
            try db.execute(
                sql: "UPDATE monitoringSession SET lastSeenAt = ? WHERE id = ? AND endedAt IS NULL",
                arguments: [timestamp, id])
        }
    }

    /// The run ended at `timestamp` (ms).
    public func endMonitoringSession(id: Int64, at timestamp: Int64) throws {
        try writer.write { db in
            try db.execute(
                sql: "UPDATE monitoringSession SET lastSeenAt = ?, endedAt = ? WHERE id = ?",
                arguments: [timestamp, timestamp, id])
        }
    }

    /// Runs that overlap `from..<to` (ms), oldest first.
    public func monitoringSessions(from: Int64, to: Int64) throws -> [MonitoringSessionRecord] {
        try writer.read { db in
            try MonitoringSessionRecord.fetchAll(
                db,
                sql: """
                    SELECT id, startedAt, lastSeenAt, endedAt FROM monitoringSession
                    WHERE startedAt < ? AND COALESCE(endedAt, lastSeenAt) >= ?
                    ORDER BY startedAt
                    """,
                arguments: [to, from])
        }
    }

    /// The first moments of every run that started before `to` (ms), newest first, at most `limit`: the nights
    /// with monitoring, for a calendar.
    public func monitoringSessionStarts(before to: Int64, limit: Int) throws -> [Int64] {
        try writer.read { db in
            try Int64.fetchAll(
                db, sql: "SELECT startedAt FROM monitoringSession WHERE startedAt < ? ORDER BY startedAt DESC LIMIT ?",
                arguments: [to, max(0, limit)])
        }
    }

    /// Events (noise and safety alerts) with timestamps in `from..<to` (ms), newest first, at most `limit`.
    public func events(from: Int64, to: Int64, limit: Int) throws -> [NoiseEventRecord] {
        try writer.read { db in
            try NoiseEventRecord
                .filter(NoiseEventRecord.CodingKeys.timestamp >= from && NoiseEventRecord.CodingKeys.timestamp < to)
                .order(NoiseEventRecord.CodingKeys.seq.desc)
                .limit(max(0, limit))
                .fetchAll(db)
        }
    }

    /// Keeps the latest ALERT_UPDATED of an alert (replacing an earlier one).
    public func recordAlertUpdate(_ update: AlertUpdateRecord) throws {
        try writer.write { db in
            try db.execute(
                sql: """
                    INSERT INTO alertUpdate (alertId, state, byName, at, mutedUntil) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT(alertId) DO UPDATE SET
                        state = excluded.state, byName = excluded.byName, at = excluded.at,
                        mutedUntil = excluded.mutedUntil
                    """,
                arguments: [update.alertId, update.state, update.byName, update.at, update.mutedUntil])
        }
    }

    /// The latest updates of these alerts, by alert id.
    public func alertUpdates(for alertIds: [String]) throws -> [String: AlertUpdateRecord] {
        guard !alertIds.isEmpty else { return [:] }
        return try writer.read { db in
            let rows = try AlertUpdateRecord.fetchAll(
                db,
                sql: "SELECT alertId, state, byName, at, mutedUntil FROM alertUpdate WHERE alertId IN ("
                    + Array(repeating: "?", count: alertIds.count).joined(separator: ",") + ")",
                arguments: StatementArguments(alertIds))
            return Dictionary(rows.map { ($0.alertId, $0) }, uniquingKeysWith: { $1 })
        }
    }
}

/// An event a listener heard from one of its monitors (a noise, or a safety alert with its severity).
public struct ReceivedEventRecord: Sendable, Hashable, Codable, FetchableRecord {
    public var eventId: String
    public var monitorId: String
    public var seq: Int64
    public var kind: String
    /// Milliseconds since the Unix epoch, the monitor's clock.
    public var timestamp: Int64
    public var peakLevel: Int
    public var severity: String?

    public init(
        eventId: String, monitorId: String, seq: Int64, kind: String, timestamp: Int64, peakLevel: Int,
        severity: String?
    ) {
        self.eventId = eventId
        self.monitorId = monitorId
        self.seq = seq
        self.kind = kind
        self.timestamp = timestamp
        self.peakLevel = peakLevel
        self.severity = severity
    }

    /// The same event as a row of the monitor's own log (for the same words).
    public var asLogged: NoiseEventRecord {
        NoiseEventRecord(
            seq: seq, eventId: eventId, kind: kind, timestamp: timestamp, peakLevel: peakLevel,
            autoStreamSessionId: nil,
            severity: severity)
    }
}

extension CribCallDatabase {
    /// How long a listener keeps what it heard.
    public static let receivedEventRetention: Int64 = 60 * 24 * 3600 * 1000

    /// Keeps an event heard from a monitor (once: a replay of a kept event changes nothing), and forgets events
    /// older than ``receivedEventRetention``.
    public func recordReceivedEvent(_ event: ReceivedEventRecord) throws {
        try writer.write { db in
            try db.execute(
                sql: """
                    INSERT OR IGNORE INTO receivedEvent (eventId, monitorId, seq, kind, timestamp, peakLevel, severity)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    event.eventId, event.monitorId, event.seq, event.kind, event.timestamp, event.peakLevel,
                    event.severity,
                ])
            try db.execute(
                sql: "DELETE FROM receivedEvent WHERE timestamp < ?",
                arguments: [event.timestamp - Self.receivedEventRetention])
        }
    }

    /// Events heard with timestamps in `from..<to` (ms), newest first, at most `limit`.
    public func receivedEvents(from: Int64, to: Int64, limit: Int) throws -> [ReceivedEventRecord] {
        try writer.read { db in
            try ReceivedEventRecord.fetchAll(
                db,
                sql: """
                    SELECT eventId, monitorId, seq, kind, timestamp, peakLevel, severity FROM receivedEvent
                    WHERE timestamp >= ? AND timestamp < ? ORDER BY timestamp DESC, seq DESC LIMIT ?
                    """,
                arguments: [from, to, max(0, limit)])
        }
    }
}

/// One run in the history while it goes on: begun at creation, seen alive every minute (so a run cut by a power
/// loss ends where it was last seen), ended by ``end()``. The monitor's monitoring and a listener's listening.
public final class MonitoringRun: Sendable {
    private let database: CribCallDatabase
    private let id: Int64
    private let clock: @Sendable () -> Date
    private let failed: @Sendable (_ what: String, _ error: (any Error)?) -> Void
    private static let goesOn = "note in the history that this run goes on"
    private let heartbeat: Task<Void, Never>

    /// Begins a run now; nil when the database cannot record it (history then misses it, nothing else does).
    /// - Parameter failed: Told what could not be recorded, and why: the start (then nil), a heartbeat (said once,
    ///   and with a nil error when one works again), the end.
    public init?(
        database: CribCallDatabase, clock: @escaping @Sendable () -> Date = Date.init,
        failed: @escaping @Sendable (_ what: String, _ error: (any Error)?) -> Void
    ) {
        let id: Int64
        do {
            id = try database.beginMonitoringSession(at: Self.milliseconds(clock()))
        } catch {
            failed("record this run in the history (the history will miss it)", error)
            return nil
        }
        self.database = database
        self.id = id
        self.clock = clock
        self.failed = failed
        heartbeat = Task {
            var failing = false
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(60))
                do {
                    try database.touchMonitoringSession(id: id, at: Self.milliseconds(clock()))
                    if failing { failed(Self.goesOn, nil) }
                    failing = false
                } catch {
                    if !failing { failed(Self.goesOn, error) }
                    failing = true
                }
            }
        }
    }

    /// Ends the run now.
    public func end() {
        heartbeat.cancel()
        do {
            try database.endMonitoringSession(id: id, at: Self.milliseconds(clock()))
        } catch {
            failed("record the end of this run in the history (it ends where last seen)", error)
        }
    }

    private static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }
}
