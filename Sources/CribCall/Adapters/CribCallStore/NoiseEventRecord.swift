public import CribCallProtocol
public import GRDB

/// A row of `noiseEvent`: one event the monitor detected — a noise, or a safety alert (with a severity) — kept for
/// `EVENTS_SINCE` replay.
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
    /// A safety alert's severity (`high`, `medium`); nil for a noise event.
    public var severity: String?
    /// A safety alert's confidence, 0…1.
    public var confidence: Double?
    /// The detector that raised a safety alert.
    public var detector: String?

    /// The string column names.
    public enum CodingKeys: String, CodingKey, ColumnExpression {
        case seq, eventId, kind, timestamp, peakLevel, autoStreamSessionId, severity, confidence, detector
    }

    /// Creates a record.
    public init(
        seq: Int64,
        eventId: String,
        kind: String,
        timestamp: Int64,
        peakLevel: Int,
        autoStreamSessionId: String?,
        severity: String? = nil,
        confidence: Double? = nil,
        detector: String? = nil
    ) {
        self.seq = seq
        self.eventId = eventId
        self.kind = kind
        self.timestamp = timestamp
        self.peakLevel = peakLevel
        self.autoStreamSessionId = autoStreamSessionId
        self.severity = severity
        self.confidence = confidence
        self.detector = detector
    }

    /// Whether this row is a safety alert.
    public var isSafetyAlert: Bool { severity != nil }

    /// The message this row replays as: SAFETY_ALERT (without its evidence) or NOISE_EVENT.
    public func replayMessage(monitorId: String) -> ControlMessage {
        guard let severity else { return .noiseEvent(message(monitorId: monitorId, replayed: true)) }
        return .safetyAlert(
            SafetyAlert(
                seq: seq, alertId: eventId, kind: SafetyAlertKind(rawValue: kind),
                severity: AlertSeverity(rawValue: severity), detectedAt: timestamp, confidence: confidence ?? 0,
                detector: detector ?? "", replayed: true))
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
