public import CanonicalJSON
import CribCallProtocol
import Foundation

extension ListenerEvent {
    /// The event as `cribcall listen --json` prints it: one object with an `"event"` field.
    public var json: JSONValue {
        switch self {
        case .connected(let id, let name, let address):
            ["event": "connected", "monitorId": .string(id), "monitorName": .string(name), "address": .string(address)]
        case .noise(let id, let name, let noise):
            [
                "event": "noise", "monitorId": .string(id), "monitorName": .string(name),
                "seq": .number(Double(noise.seq)),
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
        }
    }

    /// The event as `cribcall listen` prints it for people (an alert's time in the user's locale and time zone).
    public var text: String {
        switch self {
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
        }
    }
}
