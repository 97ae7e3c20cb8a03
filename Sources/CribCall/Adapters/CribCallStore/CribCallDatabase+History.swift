import Foundation
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
