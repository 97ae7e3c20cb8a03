public import CanonicalJSON

// The running monitor's control socket (`<data>/monitor.sock`, one JSON object per line, owner-only): how
// `cribcall alert trigger` and `cribcall camera` reach the monitor on the same machine. Local to one user on one
// machine, never on the network: not part of PROTOCOL.md's wire protocol, but typed all the same, so the command
// and the monitor cannot drift apart.

/// A request to the running monitor.
public enum MonitorControlRequest: Sendable, Hashable {
    /// `{"command":"trigger","kind":K}`: raise a safety alert of `kind` through the real path (seed 003 §6.3).
    case trigger(SafetyAlertKind)
    /// `{"command":"camera","action":"disconnect"|"reconnect"}`: let go of the camera as if unplugged, or try again.
    case camera(CameraAction)
    /// `{"command":"status"}`: the safety status now.
    case status

    public enum CameraAction: String, Sendable, Hashable, CaseIterable {
        case disconnect, reconnect
    }

    /// A request that cannot be read, in words for the caller.
    public struct Invalid: Error, Sendable, Hashable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
        init(_ message: String) { self.message = message }
    }

    /// Reads a request line's object. - Throws: ``Invalid`` saying what to send instead.
    public init(json: JSONValue) throws(Invalid) {
        switch json["command"]?.stringValue {
        case "trigger":
            guard let kind = json["kind"]?.stringValue.map(SafetyAlertKind.init(rawValue:)),
                SafetyAlertKind.known.contains(kind)
            else {
                throw Invalid("kind must be one of \(SafetyAlertKind.known.map(\.rawValue).joined(separator: ", "))")
            }
            self = .trigger(kind)
        case "camera":
            guard let action = json["action"]?.stringValue.flatMap(CameraAction.init(rawValue:)) else {
                throw Invalid("action must be disconnect or reconnect")
            }
            self = .camera(action)
        case "status":
            self = .status
        default:
            throw Invalid("unknown command: use trigger, status or camera")
        }
    }

    /// The request line's object.
    public var json: JSONValue {
        switch self {
        case .trigger(let kind): ["command": "trigger", "kind": .string(kind.rawValue)]
        case .camera(let action): ["command": "camera", "action": .string(action.rawValue)]
        case .status: ["command": "status"]
        }
    }
}

/// The running monitor's answer to a ``MonitorControlRequest``.
public enum MonitorControlAnswer: Sendable, Hashable {
    /// `{"ok":true}`: done.
    case done
    /// `{"ok":true,"alertId","seq","kind","severity"}`: the alert raised by `trigger`.
    case raised(alertId: String, seq: Int64, kind: SafetyAlertKind, severity: AlertSeverity)
    /// `{"ok":true,"safety":{…}|"off"}`: the safety status (nil: no camera is watched).
    case safety(SafetyStatus?)
    /// `{"ok":false,"error":…}`: refused, saying why and what to do.
    case refused(String)

    /// The answer line's object.
    public var json: JSONValue {
        switch self {
        case .done:
            return ["ok": true]
        case .raised(let alertId, let seq, let kind, let severity):
            return [
                "ok": true, "alertId": .string(alertId), "seq": .number(Double(seq)), "kind": .string(kind.rawValue),
                "severity": .string(severity.rawValue),
            ]
        case .safety(nil):
            return ["ok": true, "safety": "off"]
        case .safety(let status?):
            return [
                "ok": true,
                "safety": [
                    "seq": .number(Double(status.seq)), "monitoring": .string(status.monitoring.rawValue),
                    "reason": status.reason.map { .string($0) } ?? .null,
                    "movement": .string(status.movement.rawValue), "position": .string(status.position.rawValue),
                    "faceVisible": status.faceVisible.map { .bool($0) } ?? .null,
                    "updatedAt": .number(Double(status.updatedAt)),
                ],
            ]
        case .refused(let reason):
            return ["ok": false, "error": .string(reason)]
        }
    }

    /// Reads an answer line's object. - Throws: ``MonitorControlRequest/Invalid`` for one that is not an answer.
    public init(json: JSONValue) throws(MonitorControlRequest.Invalid) {
        guard let ok = json["ok"]?.boolValue else { throw .init("the monitor's answer has no \"ok\"") }
        guard ok else {
            self = .refused(json["error"]?.stringValue ?? "the monitor refused")
            return
        }
        if let alertId = json["alertId"]?.stringValue {
            guard let seq = json["seq"]?.doubleValue, let kind = json["kind"]?.stringValue,
                let severity = json["severity"]?.stringValue.flatMap(AlertSeverity.init(rawValue:))
            else { throw .init("the monitor's alert answer lacks seq, kind or severity") }
            self = .raised(
                alertId: alertId, seq: Int64(seq), kind: SafetyAlertKind(rawValue: kind), severity: severity)
        } else if let safety = json["safety"] {
            guard safety != "off" else {
                self = .safety(nil)
                return
            }
            guard let seq = safety["seq"]?.doubleValue, let updatedAt = safety["updatedAt"]?.doubleValue,
                let monitoring = safety["monitoring"]?.stringValue.flatMap(MonitoringState.init(rawValue:)),
                let movement = safety["movement"]?.stringValue.flatMap(MovementState.init(rawValue:)),
                let position = safety["position"]?.stringValue.flatMap(SleepPosition.init(rawValue:))
            else { throw .init("the monitor's safety status cannot be read") }
            self = .safety(
                SafetyStatus(
                    seq: Int64(seq), monitoring: monitoring, reason: safety["reason"]?.stringValue, movement: movement,
                    position: position, faceVisible: safety["faceVisible"]?.boolValue, updatedAt: Int64(updatedAt)))
        } else {
            self = .done
        }
    }
}
