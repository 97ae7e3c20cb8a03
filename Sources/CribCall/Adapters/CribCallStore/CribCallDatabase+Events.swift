public import Foundation
import GRDB

extension CribCallDatabase {
    /// Stores a detected event and assigns its `seq`.
    ///
    /// `seq` comes from SQLite's AUTOINCREMENT, so it is strictly greater than every `seq` ever assigned in this
    /// database, including events already pruned.
    ///
    /// - Throws: ``CribCallStoreError/duplicateEventId(_:)`` if an event with this id is already stored.
    @discardableResult
    public func appendNoiseEvent(
        eventId: String,
        kind: String,
        timestamp: Int64,
        peakLevel: Int,
        autoStreamSessionId: String?
    ) throws -> NoiseEventRecord {
        do {
            return try writer.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO noiseEvent (eventId, kind, timestamp, peakLevel, autoStreamSessionId)
                        VALUES (?, ?, ?, ?, ?)
                        """,
                    arguments: [eventId, kind, timestamp, peakLevel, autoStreamSessionId]
                )
                return NoiseEventRecord(
                    seq: db.lastInsertedRowID,
                    eventId: eventId,
                    kind: kind,
                    timestamp: timestamp,
                    peakLevel: peakLevel,
                    autoStreamSessionId: autoStreamSessionId
                )
            }
        } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
            throw CribCallStoreError.duplicateEventId(eventId)
        }
    }

    /// Stores a safety alert in the event log (same `seq` space as noise events) and assigns its `seq`; the alert's
    /// `alertId` is the row's `eventId`. Its evidence picture is never stored.
    ///
    /// - Throws: ``CribCallStoreError/duplicateEventId(_:)`` if an event with this id is already stored.
    @discardableResult
    public func appendSafetyAlert(
        alertId: String, kind: String, severity: String, timestamp: Int64, confidence: Double, detector: String
    ) throws -> NoiseEventRecord {
        do {
            return try writer.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO noiseEvent (eventId, kind, timestamp, peakLevel, severity, confidence, detector)
                        VALUES (?, ?, ?, 0, ?, ?, ?)
                        """,
                    arguments: [alertId, kind, timestamp, severity, confidence, detector]
                )
                return NoiseEventRecord(
                    seq: db.lastInsertedRowID, eventId: alertId, kind: kind, timestamp: timestamp, peakLevel: 0,
                    autoStreamSessionId: nil, severity: severity, confidence: confidence, detector: detector)
            }
        } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
            throw CribCallStoreError.duplicateEventId(alertId)
        }
    }

    /// Stores `event` (noise or safety alert) with a `seq` of at least `seqAtLeast`: the next AUTOINCREMENT value,
    /// or more when the monitor handed out higher ones it could not log (the disk was full). Its `seq` field is
    /// ignored.
    ///
    /// - Returns: The event as stored, with its `seq`.
    /// - Throws: ``CribCallStoreError/duplicateEventId(_:)`` if an event with this id is already stored; a
    ///   ``CribCallStoreError/logFull(_:)`` when the disk (or the file-size limit) is full; the database's error
    ///   otherwise.
    public func appendEvent(_ event: NoiseEventRecord, seqAtLeast: Int64) throws -> NoiseEventRecord {
        do {
            return try writer.write { db in
                let last = try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'noiseEvent'") ?? 0
                var stored = event
                stored.seq = max(last + 1, seqAtLeast)
                try stored.insert(db)
                return stored
            }
        } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
            throw CribCallStoreError.duplicateEventId(event.eventId)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_FULL {
            throw CribCallStoreError.logFull(error.message ?? "database or disk is full")
        }
    }

    /// The highest `seq` ever assigned in this database (0 for none), pruned events included.
    public func lastEventSeq() throws -> Int64 {
        try writer.read { db in
            try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'noiseEvent'") ?? 0
        }
    }

    /// Stored events with `seq > afterSeq`, in increasing `seq` order, at most `limit` of them.
    ///
    /// - Throws: ``CribCallStoreError/invalidArgument(_:)`` if `limit` is negative.
    public func noiseEvents(afterSeq: Int64, limit: Int) throws -> [NoiseEventRecord] {
        guard limit >= 0 else { throw CribCallStoreError.invalidArgument("limit must be >= 0 (got \(limit))") }
        return try writer.read { db in
            try NoiseEventRecord
                .filter(NoiseEventRecord.CodingKeys.seq > afterSeq)
                .order(NoiseEventRecord.CodingKeys.seq)
                .limit(limit)
                .fetchAll(db)
        }
    }

    /// Deletes old events, applying PROTOCOL.md §8 "kept: last 1,000 or 24 h".
    ///
    /// Reading: the two rules are a union. An event is kept if it is among the `keepLast` highest `seq` values
    /// **or** its timestamp is at or after `newerThan`; it is deleted only when it fails both. So a quiet monitor
    /// still replays its last 1,000 events however old, and a busy one replays everything from the last 24 hours.
    ///
    /// - Parameters:
    ///   - keepLast: How many of the most recent events to keep regardless of age (default 1,000).
    ///   - newerThan: The age cutoff, normally now minus 24 hours.
    /// - Returns: The number of events deleted.
    /// - Throws: ``CribCallStoreError/invalidArgument(_:)`` if `keepLast` is negative.
    @discardableResult
    public func pruneNoiseEvents(keepLast: Int = 1000, newerThan: Date) throws -> Int {
        guard keepLast >= 0 else {
            throw CribCallStoreError.invalidArgument("keepLast must be >= 0 (got \(keepLast))")
        }
        let cutoffMs = Int64((newerThan.timeIntervalSince1970 * 1000).rounded(.down))
        return try writer.write { db in
            try db.execute(
                sql: """
                    DELETE FROM noiseEvent
                    WHERE timestamp < ?
                      AND seq NOT IN (SELECT seq FROM noiseEvent ORDER BY seq DESC LIMIT ?)
                    """,
                arguments: [cutoffMs, keepLast]
            )
            return db.changesCount
        }
    }
}
