import Foundation

// Safety detections (CribAlert, PROTOCOL.md §11): the monitor's status, its alerts, and what listeners do about them.

/// Whether the monitor's safety detections can judge right now.
public enum MonitoringState: String, Sendable, Hashable, Codable, CaseIterable {
    /// Detections run and alerts may be raised.
    case active
    /// The camera is not there (unplugged, frames stopped): nothing is judged until it comes back.
    case paused
    /// Frames arrive but cannot be judged (too dark, too bright, the sleep area is empty): no alerts.
    case stale
}

/// Movement in the sleep area.
public enum MovementState: String, Sendable, Hashable, Codable, CaseIterable {
    case moving, still, unknown
}

/// The baby's position as far as the camera can tell.
public enum SleepPosition: String, Sendable, Hashable, Codable, CaseIterable {
    case onBack = "on_back"
    case onStomach = "on_stomach"
    case unknown
}

/// `SAFETY_STATUS` (monitor → listener): sent on every change (at most twice a second) and to each trusted listener
/// as soon as its control stream is open.
public struct SafetyStatus: Sendable, Hashable, Codable {
    /// Per-monitor increasing number of status changes (not the event log's `seq`).
    public var seq: Int64
    public var monitoring: MonitoringState
    /// For `paused` and `stale`: what a person can do about it ("camera disconnected", "too dark to judge").
    public var reason: String?
    public var movement: MovementState
    public var position: SleepPosition
    /// Whether a face is seen in the sleep area; nil when it cannot be told.
    public var faceVisible: Bool?
    /// Milliseconds since the Unix epoch, monitor's clock.
    public var updatedAt: Int64

    public init(
        seq: Int64, monitoring: MonitoringState, reason: String? = nil, movement: MovementState = .unknown,
        position: SleepPosition = .unknown, faceVisible: Bool? = nil, updatedAt: Int64
    ) {
        self.seq = seq
        self.monitoring = monitoring
        self.reason = reason
        self.movement = movement
        self.position = position
        self.faceVisible = faceVisible
        self.updatedAt = updatedAt
    }

    private enum CodingKeys: String, CodingKey {
        case seq, monitoring, reason, movement, position, faceVisible, updatedAt
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        seq = try container.decode(Int64.self, forKey: .seq)
        monitoring = try container.decode(MonitoringState.self, forKey: .monitoring)
        reason = try container.decodeIfPresent(String.self, forKey: .reason)
        movement = try container.decode(MovementState.self, forKey: .movement)
        position = try container.decode(SleepPosition.self, forKey: .position)
        faceVisible = try container.decodeIfPresent(Bool.self, forKey: .faceVisible)
        updatedAt = try container.decode(Int64.self, forKey: .updatedAt)
    }

    /// `faceVisible` is always written, as `null` when unknown (PROTOCOL.md §11: `true|false|null`).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(seq, forKey: .seq)
        try container.encode(monitoring, forKey: .monitoring)
        try container.encodeIfPresent(reason, forKey: .reason)
        try container.encode(movement, forKey: .movement)
        try container.encode(position, forKey: .position)
        if let faceVisible {
            try container.encode(faceVisible, forKey: .faceVisible)
        } else {
            try container.encodeNil(forKey: .faceVisible)
        }
        try container.encode(updatedAt, forKey: .updatedAt)
    }
}

/// What a safety alert is about. Extensible: a listener shows a kind it does not know by its name.
public struct SafetyAlertKind: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// No face seen for a sustained time while the baby is there.
    public static let faceCovered = SafetyAlertKind(rawValue: "face_covered")
    /// The baby seems to lie on the stomach.
    public static let onStomach = SafetyAlertKind(rawValue: "on_stomach")
    /// No movement for longer than the stillness setting.
    public static let stillness = SafetyAlertKind(rawValue: "stillness")
    /// Crying heard.
    public static let crying = SafetyAlertKind(rawValue: "crying")

    /// The four kinds of PROTOCOL.md §11.
    public static let known: [SafetyAlertKind] = [.faceCovered, .onStomach, .stillness, .crying]

    /// The severity §11 gives this kind: high for a face that may be covered and a stomach position, medium else.
    public var severity: AlertSeverity { self == .faceCovered || self == .onStomach ? .high : .medium }

    public var description: String { rawValue }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// How urgent an alert is.
public enum AlertSeverity: String, Sendable, Hashable, Codable, CaseIterable {
    case high, medium
}

/// The frame an alert was raised on: a small JPEG, kept in memory only (never in the event log).
public struct SafetyEvidence: Sendable, Hashable, Codable {
    /// The largest JPEG carried: 50 KB.
    public static let maxJPEGBytes = 50_000

    public var width: Int
    public var height: Int
    /// The JPEG, base64 (RFC 4648 §4).
    public var jpeg: String

    /// - Throws: `ControlProtocolError` (`.internalError`) when the JPEG is over ``maxJPEGBytes``.
    public init(width: Int, height: Int, jpeg bytes: [UInt8]) throws(ControlProtocolError) {
        guard bytes.count <= Self.maxJPEGBytes else {
            throw ControlProtocolError(
                .internalError, "an evidence JPEG is at most \(Self.maxJPEGBytes) bytes, not \(bytes.count)")
        }
        self.width = width
        self.height = height
        self.jpeg = PairingCrypto.base64(bytes)
    }

    private enum CodingKeys: String, CodingKey { case width, height, jpeg }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        width = try container.decode(Int.self, forKey: .width)
        height = try container.decode(Int.self, forKey: .height)
        jpeg = try container.decode(String.self, forKey: .jpeg)
        // 4 characters of base64 per 3 bytes, padded.
        guard jpeg.utf8.count <= (Self.maxJPEGBytes + 2) / 3 * 4, (1...4_096).contains(width),
            (1...4_096).contains(height)
        else {
            throw DecodingError.dataCorruptedError(
                forKey: .jpeg, in: container,
                debugDescription: "evidence is at most \(Self.maxJPEGBytes) bytes of JPEG, 1…4096 pixels a side")
        }
    }

    /// The JPEG's bytes; nil when `jpeg` is not valid base64.
    public var jpegBytes: [UInt8]? {
        Data(base64Encoded: jpeg).map(Array.init)
    }
}

/// `SAFETY_ALERT` (monitor → listener): joins the event log like NOISE_EVENT (same `seq`), and is replayed by
/// EVENTS_SINCE without its evidence.
public struct SafetyAlert: Sendable, Hashable, Codable {
    public var seq: Int64
    public var alertId: String
    public var kind: SafetyAlertKind
    public var severity: AlertSeverity
    /// Milliseconds since the Unix epoch, monitor's clock.
    public var detectedAt: Int64
    /// 0…1.
    public var confidence: Double
    /// Which detector raised it, e.g. "face-haar" or "cry-pitch"; "trigger" for `cribcall alert trigger`.
    public var detector: String
    public var evidence: SafetyEvidence?
    /// True when replayed in answer to EVENTS_SINCE.
    public var replayed: Bool?

    public init(
        seq: Int64, alertId: String, kind: SafetyAlertKind, severity: AlertSeverity? = nil, detectedAt: Int64,
        confidence: Double, detector: String, evidence: SafetyEvidence? = nil, replayed: Bool? = nil
    ) {
        self.seq = seq
        self.alertId = alertId
        self.kind = kind
        self.severity = severity ?? kind.severity
        self.detectedAt = detectedAt
        self.confidence = min(1, max(0, confidence))
        self.detector = detector
        self.evidence = evidence
        self.replayed = replayed
    }
}

/// What a listener does about an alert.
public enum AlertActionKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// "I am checking".
    case checking
    /// "Mark as okay".
    case okay
    /// Mute this kind of alert for everyone for `minutes` (default 5).
    case mute
}

/// `ALERT_ACTION` (listener → monitor).
public struct AlertAction: Sendable, Hashable, Codable {
    /// The mute used when `minutes` is absent.
    public static let defaultMuteMinutes = 5
    /// The longest mute a listener may ask for: two hours.
    public static let maxMuteMinutes = 120

    public var alertId: String
    public var action: AlertActionKind
    public var minutes: Int?

    public init(alertId: String, action: AlertActionKind, minutes: Int? = nil) {
        self.alertId = alertId
        self.action = action
        self.minutes = minutes
    }

    /// The mute's length: `minutes` within 1…``maxMuteMinutes``, else the default.
    public var muteMinutes: Int {
        guard let minutes, (1...Self.maxMuteMinutes).contains(minutes) else { return Self.defaultMuteMinutes }
        return minutes
    }
}

/// Where an alert stands once someone acted on it.
public enum AlertState: String, Sendable, Hashable, Codable, CaseIterable {
    case checking, okay, muted
}

/// `ALERT_UPDATED` (monitor → every listener).
public struct AlertUpdated: Sendable, Hashable, Codable {
    public var alertId: String
    public var state: AlertState
    /// The name of the listener who acted.
    public var by: String
    /// Milliseconds since the Unix epoch, monitor's clock.
    public var at: Int64
    /// For `muted`: until when (milliseconds since the Unix epoch).
    public var mutedUntil: Int64?

    public init(alertId: String, state: AlertState, by: String, at: Int64, mutedUntil: Int64? = nil) {
        self.alertId = alertId
        self.state = state
        self.by = by
        self.at = at
        self.mutedUntil = mutedUntil
    }
}
