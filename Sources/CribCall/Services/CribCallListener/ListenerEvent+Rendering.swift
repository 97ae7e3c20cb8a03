public import CanonicalJSON
import CribCallProtocol
import Foundation
import SafetyDetection

extension ListenerEvent {
    /// The event as `cribcall listen --json` prints it: one object with an `"event"` field.
    public var json: JSONValue {
        switch self {
        case .connected(let id, let name, let address):
            ["event": "connected", "monitorId": .string(id), "monitorName": .string(name), "address": .string(address)]
        case .noise(let id, let name, let noise):
            [
                "event": "noise", "monitorId": .string(id), "monitorName": .string(name),
                "seq": .number(Double(noise.seq)), "eventId": .string(noise.eventId),
                "peakLevel": .number(Double(noise.peakLevel)), "timestamp": .number(Double(noise.timestamp)),
                "replayed": .bool(noise.replayed ?? false),
            ]
        case .linkLost(let id, let name, let reason):
            ["event": "link_lost", "monitorId": .string(id), "monitorName": .string(name), "reason": .string(reason)]
        case .linkRestored(let id, let name):
            ["event": "link_restored", "monitorId": .string(id), "monitorName": .string(name)]
        case .unauthorized(let id, let name, let message):
            [
                "event": "unauthorized", "monitorId": .string(id), "monitorName": .string(name),
                "message": .string(message),
            ]
        case .streamStarted(let id, let sessionId, let mediaType):
            [
                "event": "stream_started", "monitorId": .string(id), "sessionId": .string(sessionId),
                "mediaType": .string(mediaType.rawValue),
            ]
        case .streamEndingSoon(let id, let sessionId, let seconds):
            [
                "event": "stream_ending_soon", "monitorId": .string(id), "sessionId": .string(sessionId),
                "secondsRemaining": .number(Double(seconds)),
            ]
        case .streamEnded(let id, let sessionId, let reason):
            [
                "event": "stream_ended", "monitorId": .string(id), "sessionId": .string(sessionId),
                "reason": .string(reason),
            ]
        case .monitoring(let id, let name, let state, let changed):
            [
                "event": "monitoring", "monitorId": .string(id), "monitorName": .string(name),
                "monitoring": .string(state.rawValue), "changed": .bool(changed),
            ]
        case .safetyStatus(let id, let name, let status):
            [
                "event": "safety_status", "monitorId": .string(id), "monitorName": .string(name),
                "seq": .number(Double(status.seq)), "monitoring": .string(status.monitoring.rawValue),
                "reason": status.reason.map { .string($0) } ?? .null, "movement": .string(status.movement.rawValue),
                "position": .string(status.position.rawValue),
                "faceVisible": status.faceVisible.map { .bool($0) } ?? .null,
                "updatedAt": .number(Double(status.updatedAt)),
            ]
        case .safetyAlert(let id, let name, let alert):
            [
                "event": "safety_alert", "monitorId": .string(id), "monitorName": .string(name),
                "seq": .number(Double(alert.seq)), "alertId": .string(alert.alertId),
                "kind": .string(alert.kind.rawValue), "severity": .string(alert.severity.rawValue),
                "detectedAt": .number(Double(alert.detectedAt)),
                "confidence": .number(JSONNumber((alert.confidence * 1000).rounded() / 1000)),
                "detector": .string(alert.detector), "replayed": .bool(alert.replayed ?? false),
                "title": .string(SafetyWording.alert(alert.kind).title),
                "evidence": alert.evidence.map {
                    [
                        "width": .number(Double($0.width)), "height": .number(Double($0.height)),
                        "jpeg": .string($0.jpeg),
                    ]
                } ?? .null,
            ]
        case .alertUpdated(let id, let name, let update):
            [
                "event": "alert_updated", "monitorId": .string(id), "monitorName": .string(name),
                "alertId": .string(update.alertId), "state": .string(update.state.rawValue), "by": .string(update.by),
                "at": .number(Double(update.at)), "mutedUntil": update.mutedUntil.map { .number(Double($0)) } ?? .null,
            ]
        case .alertsNotKept(let id, let name, let count):
            [
                "event": "alerts_not_kept", "monitorId": .string(id), "monitorName": .string(name),
                "count": .number(Double(count)),
            ]
        case .storeFailed(let what, let reason):
            ["event": "store_failed", "what": .string(what), "reason": .string(reason)]
        }
    }

    /// The event as `cribcall listen` prints it for people (an alert's time in the user's locale and time zone), the
    /// names in it as they may be shown (``displayable``).
    public var text: String {
        switch displayable {
        case .connected(_, let name, let address): "Connected to \"\(name)\" at \(address)."
        case .noise(_, let name, let noise):
            "🔔 \(noise.replayed == true ? "Missed alert" : "Noise") from \"\(name)\" — peak level \(noise.peakLevel) "
                + "(#\(noise.seq), \(Date(timeIntervalSince1970: Double(noise.timestamp) / 1000).formatted(date: .omitted, time: .standard)))"
        case .linkLost(_, let name, let reason): "⚠️  Lost the link to \"\(name)\" (\(reason)); reconnecting…"
        case .linkRestored(_, let name): "Link to \"\(name)\" is back; missed alerts follow."
        case .unauthorized(_, let name, let message): "\"\(name)\" no longer accepts this listener: \(message)"
        case .streamStarted(_, let sessionId, let mediaType):
            "▶️  Live \(mediaType == .audio ? "audio" : "audio and video") (stream \(sessionId.prefix(8)))."
        case .streamEndingSoon(_, let sessionId, let seconds):
            "Stream \(sessionId.prefix(8)) ends in \(seconds) s unless pinned."
        case .streamEnded(_, let sessionId, let reason): "Stream \(sessionId.prefix(8)) ended (\(reason))."
        case .monitoring(_, let name, let state, let changed):
            switch (state, changed) {
            case (.off, _):
                "⚠️  Monitoring is OFF at \"\(name)\": no alert can come from it until someone starts monitoring there."
            case (.on, true): "Monitoring is back ON at \"\(name)\"."
            case (.on, false): "Monitoring is on at \"\(name)\"."
            }
        case .safetyStatus(_, let name, let status):
            "\(name): "
                + SafetyWording.status(
                    status.monitoring, reason: status.reason, movement: status.movement, position: status.position,
                    faceVisible: status.faceVisible)
        case .safetyAlert(_, let name, let alert):
            Self.alertText(alert, monitorName: name)
        case .alertUpdated(_, let name, let update):
            "\(name): " + SafetyWording.update(update.state, by: update.by, mutedMinutes: Self.minutes(update))
        case .alertsNotKept(_, let name, let count):
            "⚠️  \(count) alert\(count == 1 ? "" : "s") from \"\(name)\" while the link was down \(count == 1 ? "is" : "are") "
                + "too old for the monitor to keep (the last 1,000, or a day's); the rest follow."
        case .storeFailed(let what, let reason):
            "⚠️  This listener's database failed: it could not \(what) (\(reason)). Check the disk and the data "
                + "directory; alerts still come through."
        }
    }

    /// The event with the names peers chose (the monitor's, and who acted on an alert) in the form they may be shown
    /// to a person, ``PeerName/sanitized(_:)``: what ``text`` and the desktop notification say. ``json`` keeps them
    /// exact (JSON escaping protects a script's terminal).
    var displayable: ListenerEvent {
        switch self {
        case .connected(let id, let name, let address):
            return .connected(monitorId: id, monitorName: PeerName.sanitized(name), address: address)
        case .noise(let id, let name, let noise):
            return .noise(monitorId: id, monitorName: PeerName.sanitized(name), event: noise)
        case .linkLost(let id, let name, let reason):
            return .linkLost(monitorId: id, monitorName: PeerName.sanitized(name), reason: reason)
        case .linkRestored(let id, let name):
            return .linkRestored(monitorId: id, monitorName: PeerName.sanitized(name))
        case .unauthorized(let id, let name, let message):
            return .unauthorized(monitorId: id, monitorName: PeerName.sanitized(name), message: message)
        case .streamStarted, .streamEndingSoon, .streamEnded:
            return self
        case .monitoring(let id, let name, let state, let changed):
            return .monitoring(monitorId: id, monitorName: PeerName.sanitized(name), state: state, changed: changed)
        case .safetyStatus(let id, let name, let status):
            return .safetyStatus(monitorId: id, monitorName: PeerName.sanitized(name), status: status)
        case .safetyAlert(let id, let name, let alert):
            return .safetyAlert(monitorId: id, monitorName: PeerName.sanitized(name), alert: alert)
        case .alertUpdated(let id, let name, var update):
            update.by = PeerName.sanitized(update.by)
            return .alertUpdated(monitorId: id, monitorName: PeerName.sanitized(name), update: update)
        case .alertsNotKept(let id, let name, let count):
            return .alertsNotKept(monitorId: id, monitorName: PeerName.sanitized(name), count: count)
        case .storeFailed:
            return self
        }
    }

    /// An alert in words: its tag, title and what to do, when, and how sure (never a medical claim).
    static func alertText(_ alert: SafetyAlert, monitorName: String) -> String {
        let words = SafetyWording.alert(alert.kind)
        let time = Date(timeIntervalSince1970: Double(alert.detectedAt) / 1000).formatted(
            date: .omitted, time: .standard)
        let missed = alert.replayed == true ? "Missed while the link was down — " : ""
        return
            "\(alert.severity == .high ? "⚠️ " : "🔔") \(missed)\(SafetyWording.tag(alert.kind, severity: alert.severity)) "
            + "from \"\(monitorName)\": \(words.title). \(words.detail) (#\(alert.seq), \(time), "
            + "confidence \(Int((alert.confidence * 100).rounded())) %)"
    }

    /// A mute's length in minutes, from its end.
    static func minutes(_ update: AlertUpdated) -> Int? {
        update.mutedUntil.map { Int(((Double($0 - update.at)) / 60_000).rounded()) }
    }
}
