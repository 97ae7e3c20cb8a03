public import CanonicalJSON
import CribCallProtocol
import CribCallStore

extension MonitorEvent {
    /// The `--json` line of this event: one object with `"event"` (names as in the contract).
    public var json: JSONValue {
        func number(_ value: some BinaryInteger) -> JSONValue { .number(Double(value)) }
        switch self {
        case .ready(let monitorId, let monitorName, let certFingerprint, let port):
            return [
                "event": "ready", "monitorId": .string(monitorId), "monitorName": .string(monitorName),
                "certFingerprint": .string(certFingerprint), "port": number(port),
            ]
        case .qr(let payload, let text):
            let object = (try? JSONValueEncoder().encode(payload)) ?? .null
            return ["event": "qr", "payload": object, "text": .string(text)]
        case .pin(let pin, let pairingSessionId, let expiresInSec, let attemptsRemaining):
            return [
                "event": "pin", "pin": .string(pin), "pairingSessionId": .string(pairingSessionId),
                "expiresInSec": number(expiresInSec), "attemptsRemaining": number(attemptsRemaining),
            ]
        case .pinHidden:
            return ["event": "pin_hidden"]
        case .paired(let listenerId, let listenerName, let certFingerprint, let method):
            return [
                "event": "paired", "listenerId": .string(listenerId), "listenerName": .string(listenerName),
                "certFingerprint": .string(certFingerprint), "method": .string(method),
            ]
        case .pairingFailed(let reason):
            return ["event": "pairing_failed", "reason": .string(reason)]
        case .storeFailed(let what, let reason):
            return ["event": "store_failed", "what": .string(what), "reason": .string(reason)]
        case .eventNotLogged(let seq, let reason):
            return ["event": "event_not_logged", "seq": number(seq), "reason": .string(reason)]
        case .noise(let seq, let eventId, let peakLevel, let timestamp):
            return [
                "event": "noise", "seq": number(seq), "eventId": .string(eventId), "peakLevel": number(peakLevel),
                "timestamp": number(timestamp),
            ]
        case .listenerConnected(let certFingerprint, let listenerId, let trusted):
            return [
                "event": "listener_connected", "certFingerprint": .string(certFingerprint),
                "listenerId": listenerId.map { .string($0) } ?? .null, "trusted": .bool(trusted),
            ]
        case .unpairedConnections(let count, let within):
            return [
                "event": "unpaired_connections", "count": number(count),
                "withinSeconds": number(within.components.seconds),
            ]
        case .listenerDisconnected(let certFingerprint, let listenerId, let reason):
            return [
                "event": "listener_disconnected", "certFingerprint": .string(certFingerprint),
                "listenerId": listenerId.map { .string($0) } ?? .null, "reason": .string(reason),
            ]
        case .listenerRevoked(let listenerId):
            return ["event": "listener_revoked", "listenerId": .string(listenerId)]
        case .settingsChanged(let settings):
            return [
                "event": "settings_changed", "monitorName": .string(settings.monitorName),
                "threshold": number(settings.threshold), "minDurationMs": number(settings.minDurationMs),
                "cooldownSec": number(settings.cooldownSec), "autoStream": .string(settings.autoStream.rawValue),
                "autoStreamSec": number(settings.autoStreamSec),
            ]
        case .monitoringSwitched(let on):
            return ["event": "monitoring", "monitoring": .string(on ? "on" : "off")]
        case .streamStarted(let sessionId, let listenerId, let mediaType, let automatic):
            return [
                "event": "stream_started", "sessionId": .string(sessionId), "listenerId": .string(listenerId),
                "mediaType": .string(mediaType.rawValue), "automatic": .bool(automatic),
            ]
        case .streamEnded(let sessionId, let reason):
            return ["event": "stream_ended", "sessionId": .string(sessionId), "reason": .string(reason)]
        case .safetyStatus(let status):
            return [
                "event": "safety_status", "seq": number(status.seq), "monitoring": .string(status.monitoring.rawValue),
                "reason": status.reason.map { .string($0) } ?? .null, "movement": .string(status.movement.rawValue),
                "position": .string(status.position.rawValue),
                "faceVisible": status.faceVisible.map { .bool($0) } ?? .null,
                "updatedAt": number(status.updatedAt),
            ]
        case .cannotJudge(let reason, let minutes):
            return ["event": "cannot_judge", "reason": .string(reason), "minutes": number(minutes)]
        case .judgingAgain:
            return ["event": "judging_again"]
        case .safetyAlert(let alert):
            return [
                "event": "safety_alert", "seq": number(alert.seq), "alertId": .string(alert.alertId),
                "kind": .string(alert.kind.rawValue), "severity": .string(alert.severity.rawValue),
                "detectedAt": number(alert.detectedAt),
                "confidence": .number(JSONNumber((alert.confidence * 1000).rounded() / 1000)),
                "detector": .string(alert.detector),
                "evidenceBytes": alert.evidence?.jpegBytes.map { number($0.count) } ?? .null,
            ]
        case .alertUpdated(let update):
            return [
                "event": "alert_updated", "alertId": .string(update.alertId), "state": .string(update.state.rawValue),
                "by": .string(update.by), "at": number(update.at),
                "mutedUntil": update.mutedUntil.map { number($0) } ?? .null,
            ]
        }
    }
}
