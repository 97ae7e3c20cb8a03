public import CribCallProtocol
public import GRDB

/// A row of `noiseEvent`: one event the monitor detected, kept for `EVENTS_SINCE` replay.
public struct NoiseEventRecord: Sendable, Hashable, Codable, FetchableRecord, PersistableRecord {
    /// The table name, `noiseEvent`.
    public static let databaseTableName = "noiseEvent"

    /// Per-monitor increasing sequence number (primary key, AUTOINCREMENT: never reused, even after pruning).
    public var seq: Int64
    /// The event's unique id.
    public var eventId: String
    /// `"noise"`; later `"cry"`, `"stillness"`, …
    public var kind: String
    /// Milliseconds since the Unix epoch, monitor's clock.
    public var timestamp: Int64
    /// Peak level 0...100.
    public var peakLevel: Int
    /// The automatic stream started for this event, if any.
    public var autoStreamSessionId: String?

    /// The string column names.
    public enum CodingKeys: String, CodingKey, ColumnExpression {
        case seq, eventId, kind, timestamp, peakLevel, autoStreamSessionId
    }

    /// Creates a record.
    public init(
        seq: Int64,
        eventId: String,
        kind: String,
        timestamp: Int64,
        peakLevel: Int,
        autoStreamSessionId: String?
    ) {
        self.seq = seq
        self.eventId = eventId
        self.kind = kind
        self.timestamp = timestamp
        self.peakLevel = peakLevel
        self.autoStreamSessionId = autoStreamSessionId
    }

    /// The `NOISE_EVENT` message for this event.
    ///
    /// - Parameters:
    ///   - monitorId: The id of the monitor that owns this database.
    ///   - replayed: True when sent in answer to `EVENTS_SINCE`; false leaves the field out of the message.
    public func message(monitorId: String, replayed: Bool = false) -> NoiseEvent {
        NoiseEvent(
            monitorId: monitorId,
            timestamp: timestamp,
            peakLevel: peakLevel,
            seq: seq,
            eventId: eventId,
            kind: kind,
            autoStreamSessionId: autoStreamSessionId,
            replayed: replayed ? true : nil
        )
    }
}
