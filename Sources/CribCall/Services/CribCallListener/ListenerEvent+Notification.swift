import CribCallProtocol
public import DesktopNotifications
import Foundation
public import SafetyDetection

extension ListenerEvent {
    /// The desktop notification a parent should get for this event, or nil (a routine connection needs none).
    ///
    /// One notification per monitor (tagged with its id), replaced as things change: an alert, then "link lost",
    /// then "back" all update the same bubble instead of piling up. Alerts and a lost link are critical and stay
    /// until dismissed; the all-clear goes away by itself. A live stream about to stop by itself gets a normal-urgency
    /// bubble of its own (tagged by stream) that expires with the stream. The names in it are those of ``text``
    /// (``displayable``).
    public var desktopNotification: DesktopNotification? {
        switch displayable {
        case .connected:
            return nil
        case .noise(let monitorId, let name, let event):
            let time = Date(timeIntervalSince1970: Double(event.timestamp) / 1000)
                .formatted(date: .omitted, time: .shortened)
            let missed = event.replayed == true
            return DesktopNotification(
                summary: missed ? "Missed alert from \(name)" : "Noise in \(name)",
                body:
                    "\(missed ? "While the link was down: noise" : "Noise") at \(time), peak level \(event.peakLevel) of 100.",
                urgency: .critical, category: .device, tag: monitorId, expiration: .never)
        case .linkLost(let monitorId, let name, _):
            return DesktopNotification(
                summary: "Lost the link to \(name)",
                body: "Alerts from \(name) cannot reach you. Reconnecting; missed alerts will follow.",
                urgency: .critical, category: .networkDisconnected, tag: monitorId, icon: "network-offline",
                expiration: .never)
        case .linkRestored(let monitorId, let name):
            return DesktopNotification(
                summary: "\(name) is back", body: "The link is restored; any missed alerts are shown.",
                urgency: .normal, category: .networkConnected, tag: monitorId, expiration: .after(.seconds(10)))
        case .unauthorized(let monitorId, let name, let message):
            return DesktopNotification(
                summary: "\(name) no longer accepts this listener",
                body: "\(message). Pair again to get its alerts.",
                urgency: .critical, category: .deviceError, tag: monitorId, icon: "dialog-warning", expiration: .never)
        case .streamStarted, .streamEnded:
            // The user opened the stream, or is watching it: the player shows it, no bubble needed.
            return nil
        case .storeFailed:
            // Alerts still arrive (with their own bubbles); the line printed says what the database lost.
            return nil
        case .alertsNotKept(let monitorId, let name, let count):
            return DesktopNotification(
                summary: "Some alerts from \(name) are gone",
                body:
                    "\(count) alert\(count == 1 ? "" : "s") from while the link was down \(count == 1 ? "was" : "were") "
                    + "older than the monitor keeps. The others are shown.",
                urgency: .normal, category: .device, tag: monitorId, expiration: .never)
        case .monitoring(let monitorId, let name, let state, let changed):
            // Off is worth a bubble that stays (nothing will come from it); back on, one that goes by itself.
            switch (state, changed) {
            case (.off, _):
                return DesktopNotification(
                    summary: "Monitoring is off at \(name)",
                    body: "No alert can come from \(name) until someone starts monitoring there.",
                    urgency: .critical, category: .device, tag: "\(monitorId)/monitoring", icon: "dialog-warning",
                    expiration: .never)
            case (.on, true):
                return DesktopNotification(
                    summary: "Monitoring is back on at \(name)", body: "Its alerts reach you again.",
                    urgency: .normal, category: .device, tag: "\(monitorId)/monitoring",
                    expiration: .after(.seconds(10)))
            case (.on, false):
                return nil
            }
        case .safetyStatus(let monitorId, let name, let status):
            // Only a monitor that stopped judging is worth a bubble; an active one needs none.
            guard status.monitoring != .active else { return nil }
            return DesktopNotification(
                summary: status.monitoring == .paused ? "\(name): monitoring paused" : "\(name) cannot judge right now",
                body: SafetyWording.status(
                    status.monitoring, reason: status.reason, movement: status.movement, position: status.position,
                    faceVisible: status.faceVisible),
                urgency: .normal, category: .device, tag: "\(monitorId)/safety", icon: "camera-web",
                expiration: .never)
        case .safetyAlert(let monitorId, let name, let alert):
            let words = SafetyWording.alert(alert.kind)
            return DesktopNotification(
                summary: "\(alert.replayed == true ? "Missed: " : "")\(words.title) (\(name))",
                body: "\(words.detail)",
                urgency: alert.severity == .high ? .critical : .normal, category: .device,
                tag: Self.alertTag(monitorId: monitorId, alertId: alert.alertId),
                icon: alert.severity == .high ? "dialog-warning" : "audio-volume-high",
                expiration: .never,
                actions: SafetyWording.buttons(alert.kind).map { .init(key: $0.button.rawValue, label: $0.label) })
        case .alertUpdated(let monitorId, let name, let update):
            return DesktopNotification(
                summary:
                    "\(name): \(SafetyWording.update(update.state, by: update.by, mutedMinutes: Self.minutes(update)))",
                body: "", urgency: .low, category: .device,
                tag: Self.alertTag(monitorId: monitorId, alertId: update.alertId),
                expiration: .after(.seconds(15)))
        case .streamEndingSoon(let monitorId, let sessionId, let seconds):
            // Its own tag: it must not replace the monitor's alert bubble.
            return DesktopNotification(
                summary: "Live stream ends in \(seconds) s",
                body: "The automatic stream stops by itself; pin it to keep watching.",
                urgency: .normal, category: .device, tag: "\(monitorId)/stream/\(sessionId)",
                icon: "media-playback-start", expiration: .after(.seconds(seconds)))
        }
    }
}

extension ListenerEvent {
    /// The tag of a safety alert's bubble (its update replaces it).
    static func alertTag(monitorId: String, alertId: String) -> String {
        "\(monitorId)/alert/\(alertId)"
    }

    /// The safety alert button a click on a desktop notification stands for, with the alert's monitor and id; nil
    /// for any other click.
    public static func alertButton(
        clicked invocation: DesktopNotification.Invocation
    ) -> (button: SafetyWording.Button, monitorId: String, alertId: String)? {
        guard let button = SafetyWording.Button(rawValue: invocation.key), let tag = invocation.tag,
            let separator = tag.range(of: "/alert/", options: .backwards)
        else { return nil }
        let monitorId = String(tag[..<separator.lowerBound])
        let alertId = String(tag[separator.upperBound...])
        guard !monitorId.isEmpty, !alertId.isEmpty else { return nil }
        return (button, monitorId, alertId)
    }
}
