public import CanonicalJSON

/// The recorder daemon's answer to `start`, `stop`, `wake` and `quit` (one JSON object): done, with the seed's
/// reply and the recording it is about, or refused with what to do. Typed like ``DaemonRequest`` so the daemon and
/// the commands cannot drift apart.
public struct DaemonReply: Sendable, Hashable {
    /// Whether the daemon did it.
    public var ok: Bool
    /// The seed's words for what happened (`Recording started`, …); nil for `wake` and `quit`.
    public var reply: ToukanReply?
    /// Why it was refused, in words for the person.
    public var error: String?
    /// The recording's path.
    public var file: String?
    /// The saved recording's length, in seconds (tenths).
    public var durationSeconds: Double?

    /// Done: `{"ok":true,"reply":R?,"file":F?,"durationSeconds":D?}`.
    public static func done(_ reply: ToukanReply? = nil, file: String? = nil, durationSeconds: Double? = nil) -> Self {
        DaemonReply(ok: true, reply: reply, error: nil, file: file, durationSeconds: durationSeconds)
    }

    /// Refused: `{"ok":false,"error":E}`.
    public static func refused(_ message: String) -> Self {
        DaemonReply(ok: false, reply: nil, error: message, file: nil, durationSeconds: nil)
    }

    /// The answer line's object.
    public var json: JSONValue {
        var object: [String: JSONValue] = ["ok": .bool(ok)]
        if let reply { object["reply"] = .string(reply.rawValue) }
        if let error { object["error"] = .string(error) }
        if let file { object["file"] = .string(file) }
        if let durationSeconds { object["durationSeconds"] = .number(durationSeconds) }
        return .object(object)
    }

    /// Reads an answer line's object. - Throws: ``DaemonRequest/Invalid`` for one that is not an answer.
    public init(json: JSONValue) throws(DaemonRequest.Invalid) {
        guard let ok = json["ok"]?.boolValue else {
            throw DaemonRequest.Invalid(
                message: "the daemon's answer has no \"ok\": \(json.canonicalString.prefix(200))")
        }
        let reply = json["reply"]?.stringValue
        guard reply == nil || ToukanReply(rawValue: reply!) != nil else {
            throw DaemonRequest.Invalid(message: "the daemon answered an unknown reply: \(reply!.prefix(80))")
        }
        self.init(
            ok: ok, reply: reply.flatMap(ToukanReply.init(rawValue:)), error: json["error"]?.stringValue,
            file: json["file"]?.stringValue, durationSeconds: json["durationSeconds"]?.doubleValue)
    }

    public init(ok: Bool, reply: ToukanReply?, error: String?, file: String?, durationSeconds: Double?) {
        self.ok = ok
        self.reply = reply
        self.error = error
        self.file = file
        self.durationSeconds = durationSeconds
    }
}

/// What the recorder daemon is doing (`status`, and four times a second for `watch`):
/// `{"event":"status","pid":P,"state":"idle"|"recording"|"paused",…}`.
public struct DaemonStatus: Sendable, Hashable {
    public enum State: String, Sendable, Hashable {
        case idle, recording, paused
    }

    /// The input's level just now, in dBFS (whole decibels).
    public struct Level: Sendable, Hashable {
        public var peakDb: Double
        public var rmsDb: Double

        public init(peakDb: Double, rmsDb: Double) {
            self.peakDb = peakDb
            self.rmsDb = rmsDb
        }
    }

    /// A recording a dead daemon left, finalised by this one as it started.
    public struct Recovered: Sendable, Hashable {
        /// Its file name.
        public var file: String
        public var durationSeconds: Double

        public init(file: String, durationSeconds: Double) {
            self.file = file
            self.durationSeconds = durationSeconds
        }
    }

    /// The daemon's process id; nil when no daemon runs (the commands' own "idle").
    public var pid: Int?
    public var state: State
    /// How long it has recorded, in seconds (tenths), while recording.
    public var elapsedSeconds: Double?
    /// The recording's path, while recording.
    public var file: String?
    public var level: Level?
    /// The input's losses so far, as the person reads them ("gap 00:12–00:15"), while recording.
    public var gaps: [String]?
    /// What it recovered as it started (`status` only).
    public var recoveredAtStart: [Recovered]?

    public init(
        pid: Int?, state: State, elapsedSeconds: Double? = nil, file: String? = nil, level: Level? = nil,
        gaps: [String]? = nil, recoveredAtStart: [Recovered]? = nil
    ) {
        self.pid = pid
        self.state = state
        self.elapsedSeconds = elapsedSeconds
        self.file = file
        self.level = level
        self.gaps = gaps
        self.recoveredAtStart = recoveredAtStart
    }

    /// No daemon runs.
    public static let noDaemon = DaemonStatus(pid: nil, state: .idle)

    /// The status line's object.
    public var json: JSONValue {
        var object: [String: JSONValue] = [
            "event": "status", "pid": pid.map { .number(Double($0)) } ?? .null, "state": .string(state.rawValue),
        ]
        if let elapsedSeconds { object["elapsedSeconds"] = .number(elapsedSeconds) }
        if let file { object["file"] = .string(file) }
        if let level { object["level"] = ["peakDb": .number(level.peakDb), "rmsDb": .number(level.rmsDb)] }
        if let gaps { object["gaps"] = .array(gaps.map { .string($0) }) }
        if let recoveredAtStart {
            object["recoveredAtStart"] = .array(
                recoveredAtStart.map { ["file": .string($0.file), "durationSeconds": .number($0.durationSeconds)] })
        }
        return .object(object)
    }

    /// Reads a status line's object. - Throws: ``DaemonRequest/Invalid`` for one that is not a status.
    public init(json: JSONValue) throws(DaemonRequest.Invalid) {
        guard json["event"]?.stringValue == "status",
            let state = json["state"]?.stringValue.flatMap(State.init(rawValue:))
        else {
            throw DaemonRequest.Invalid(message: "not the daemon's status: \(json.canonicalString.prefix(200))")
        }
        self.init(
            pid: json["pid"]?.doubleValue.map { Int($0) }, state: state,
            elapsedSeconds: json["elapsedSeconds"]?.doubleValue, file: json["file"]?.stringValue,
            level: json["level"].flatMap { level in
                guard let peak = level["peakDb"]?.doubleValue, let rms = level["rmsDb"]?.doubleValue else {
                    return nil
                }
                return Level(peakDb: peak, rmsDb: rms)
            },
            gaps: json["gaps"]?.arrayValue?.compactMap(\.stringValue),
            recoveredAtStart: json["recoveredAtStart"]?.arrayValue?.compactMap { item in
                item["file"]?.stringValue.map {
                    Recovered(file: $0, durationSeconds: item["durationSeconds"]?.doubleValue ?? 0)
                }
            })
    }
}
