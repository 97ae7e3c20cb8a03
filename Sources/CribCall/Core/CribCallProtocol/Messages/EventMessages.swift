// Noise events and liveness (seed 2.5.2, PROTOCOL.md §8).

/// `NOISE_EVENT` (monitor → listener).
public struct NoiseEvent: Sendable, Hashable, Codable {
    public var monitorId: String
    /// Milliseconds since the Unix epoch, monitor's clock.
    public var timestamp: Int64
    /// 0…100.
    public var peakLevel: Int
    /// Per-monitor increasing sequence number, for EVENTS_SINCE.
    public var seq: Int64
    public var eventId: String
    /// "noise"; later "cry", "stillness", …
    public var kind: String
    /// Set when the monitor starts an automatic stream for this event.
    public var autoStreamSessionId: String?
    /// True when replayed in answer to EVENTS_SINCE.
    public var replayed: Bool?

    public init(
        monitorId: String,
        timestamp: Int64,
        peakLevel: Int,
        seq: Int64,
        eventId: String,
        kind: String = "noise",
        autoStreamSessionId: String? = nil,
        replayed: Bool? = nil
    ) {
        self.monitorId = monitorId
        self.timestamp = timestamp
        self.peakLevel = peakLevel
        self.seq = seq
        self.eventId = eventId
        self.kind = kind
        self.autoStreamSessionId = autoStreamSessionId
        self.replayed = replayed
    }
}

/// `EVENTS_SINCE` (listener → monitor): replay events after this sequence number.
public struct EventsSince: Sendable, Hashable, Codable {
    public var afterSeq: Int64
    public init(afterSeq: Int64) { self.afterSeq = afterSeq }
}

/// `PING` and `PONG`.
public struct Ping: Sendable, Hashable, Codable {
    /// Milliseconds; echoed in the PONG.
    public var timestamp: Int64
    public init(timestamp: Int64) { self.timestamp = timestamp }
}

/// `ERROR` (either way): `{"type":"ERROR","code":N,"error":"NAME","message":"…"}` (PROTOCOL.md §4).
public struct ErrorMessage: Sendable, Hashable, Codable {
    public var code: Int
    public var error: String
    public var message: String
    /// The offending message type, when known.
    public var inReplyTo: String?

    /// The longest `inReplyTo` sent: it echoes a peer-chosen type name, which must not make the reply unframeable.
    public static let maxInReplyToLength = 64

    public init(code: ErrorCode, message: String, inReplyTo: String? = nil) {
        self.code = code.rawValue
        self.error = code.name
        self.message = message
        self.inReplyTo = inReplyTo.map { String($0.prefix(Self.maxInReplyToLength)) }
    }

    /// The code as a known value, or nil for a code this version does not know.
    public var errorCode: ErrorCode? { ErrorCode(rawValue: code) }
}
