import CanonicalJSON
import CribCallProtocol
import Foundation

/// What an app raises by itself, beside the monitors' safety alerts. On a listener: a noise the monitor heard
/// (NOISE_EVENT), a lost link, a monitor that no longer accepts this listener. On the monitor: safety monitoring
/// that has been unable to judge for minutes. They are shown, sounded and notified like alerts (the page treats
/// every entry of `state.alerts` alike) but live only in this app: "Dismiss" closes them here, and a link that
/// comes back (monitoring that judges again) closes its notice by itself, saying so.
///
/// One open notice per monitor and kind: a newer noise replaces the one still open (the page rings again, for a
/// new id), so a night of crying is one dialog that keeps sounding, not a pile.
struct LocalNotices {
    /// How many notices are kept (open and closed).
    static let limit = 20

    struct Notice {
        var id: String
        var monitorId: String
        /// `noise`, `link_lost`, `unauthorized`, `cannot_judge` or `monitoring_off`.
        var kind: String
        var severity: String
        var tag: String
        var title: String
        var body: String
        var detectedAt: Int64
        /// `open`, or `okay` once dismissed or resolved.
        var state: String
        /// What the page says when it closes by itself (the link came back); empty: close quietly.
        var note: String?
        var buttons: [(action: String, label: String)]
    }

    private(set) var notices: [Notice] = []
    private var counter = 0

    /// A noise the monitor heard (live or replayed after a lost link).
    mutating func noise(monitorId: String, name: String, event: NoiseEvent, now: Date = Date()) {
        let missed = event.replayed == true
        let time = Date(timeIntervalSince1970: Double(event.timestamp) / 1000).formatted(
            date: .omitted, time: .shortened)
        let body =
            missed
            ? "While the link was down, \(name) heard a sound at \(time). Listen in to check on your baby."
            : "\(name) hears a sound (level \(event.peakLevel) of 100). Listen in to check on your baby."
        open(
            Notice(
                id: "noise-\(event.eventId)", monitorId: monitorId, kind: "noise", severity: "medium",
                tag: "Listening for sounds", title: missed ? "Missed: a sound in \(name)" : "A sound in \(name)",
                body: body, detectedAt: missed ? event.timestamp : Self.millis(now), state: "open", note: nil,
                buttons: [("listen", "Listen now"), ("dismiss", "Dismiss")]))
    }

    /// The link to a monitor was lost: alerts cannot arrive until it is back.
    mutating func linkLost(monitorId: String, name: String, now: Date = Date()) {
        guard !isOpen(monitorId: monitorId, kind: "link_lost") else { return }
        open(
            Notice(
                id: nextId("link"), monitorId: monitorId, kind: "link_lost", severity: "high", tag: "CONNECTION",
                title: "Lost the link to \(name)",
                body:
                    "Alerts from \(name) cannot reach you until it is back. Reconnecting by itself; check that "
                    + "\(name) is on and on this network. Missed alerts will follow.",
                detectedAt: Self.millis(now), state: "open", note: nil, buttons: [("dismiss", "OK")]))
    }

    /// The monitor refuses this listener (unpaired there, or another device at its address).
    mutating func unauthorized(monitorId: String, name: String, message: String, now: Date = Date()) {
        resolve(monitorId: monitorId, kind: "link_lost", note: "")
        guard !isOpen(monitorId: monitorId, kind: "unauthorized") else { return }
        open(
            Notice(
                id: nextId("refused"), monitorId: monitorId, kind: "unauthorized", severity: "high",
                tag: "CONNECTION", title: "\(name) no longer accepts this device",
                body: "\(message). Its alerts cannot reach you: pair with \(name) again.",
                detectedAt: Self.millis(now), state: "open", note: nil, buttons: [("dismiss", "OK")]))
    }

    /// Connected again: the "lost" notice closes, saying so.
    mutating func linkBack(monitorId: String, name: String) {
        resolve(monitorId: monitorId, kind: "link_lost", note: "The link to \(name) is back.")
        resolve(monitorId: monitorId, kind: "unauthorized", note: "")
    }

    /// Monitoring was switched off at the monitor: nothing can come from it until it is on again.
    mutating func monitoringOff(monitorId: String, name: String, now: Date = Date()) {
        guard !isOpen(monitorId: monitorId, kind: "monitoring_off") else { return }
        open(
            Notice(
                id: nextId("off"), monitorId: monitorId, kind: "monitoring_off", severity: "medium",
                tag: "MONITORING OFF", title: "Monitoring is off at \(name)",
                body:
                    "Someone stopped monitoring at \(name). No sound or safety alert can reach you until monitoring "
                    + "is started there again.",
                detectedAt: Self.millis(now), state: "open", note: nil, buttons: [("dismiss", "OK")]))
    }

    /// Monitoring is on again: the "off" notice closes, saying so.
    mutating func monitoringOn(monitorId: String, name: String) {
        resolve(monitorId: monitorId, kind: "monitoring_off", note: "Monitoring is back on at \(name).")
    }

    /// Safety monitoring has not judged for `minutes` (`reason`): no safety alert can be raised.
    mutating func cannotJudge(monitorId: String, reason: String, minutes: Int, now: Date = Date()) {
        guard !isOpen(monitorId: monitorId, kind: "cannot_judge") else { return }
        open(
            Notice(
                id: nextId("unjudged"), monitorId: monitorId, kind: "cannot_judge", severity: "medium",
                tag: "MONITORING PAUSED", title: "Monitoring cannot see your baby",
                body:
                    "For \(minutes) minutes now: \(reason). No safety alert can be raised until it can see again. "
                    + "Check the camera, its light and the sleep area.",
                detectedAt: Self.millis(now), state: "open", note: nil, buttons: [("dismiss", "OK")]))
    }

    /// Safety monitoring judges again: its notice closes, saying so.
    mutating func judgingAgain(monitorId: String) {
        resolve(monitorId: monitorId, kind: "cannot_judge", note: "Monitoring can see again.")
    }

    /// "Dismiss" on a page. False when there is no such notice.
    mutating func dismiss(_ id: String) -> Bool {
        guard let index = notices.firstIndex(where: { $0.id == id }) else { return false }
        notices[index].state = "okay"
        notices[index].note = ""
        return true
    }

    /// Whether `id` names a notice (rather than a monitor's alert).
    func contains(_ id: String) -> Bool { notices.contains { $0.id == id } }

    /// The notices as `state.alerts` entries (with the monitor's name, as alerts have).
    func json(names: [String: String]) -> [(detectedAt: Int64, value: JSONValue)] {
        notices.map { notice in
            let value: JSONValue = [
                "alertId": .string(notice.id), "kind": .string(notice.kind), "severity": .string(notice.severity),
                "tag": .string(notice.tag), "title": .string(notice.title), "body": .string(notice.body),
                "detectedAt": .number(Double(notice.detectedAt)), "state": .string(notice.state), "by": .null,
                "mutedUntil": .null, "local": true, "note": notice.note.map { .string($0) } ?? .null,
                "buttons": .array(notice.buttons.map { ["action": .string($0.action), "label": .string($0.label)] }),
                "monitorId": .string(notice.monitorId),
                "monitorName": .string(names[notice.monitorId] ?? "Monitor"),
            ]
            return (notice.detectedAt, value)
        }
    }

    private func isOpen(monitorId: String, kind: String) -> Bool {
        notices.contains { $0.monitorId == monitorId && $0.kind == kind && $0.state == "open" }
    }

    private mutating func open(_ notice: Notice) {
        // A newer one of the same kind takes the place of the one still open (closed quietly).
        resolve(monitorId: notice.monitorId, kind: notice.kind, note: "")
        notices.insert(notice, at: 0)
        if notices.count > Self.limit { notices.removeLast(notices.count - Self.limit) }
    }

    private mutating func resolve(monitorId: String, kind: String, note: String) {
        for index in notices.indices
        where notices[index].monitorId == monitorId && notices[index].kind == kind && notices[index].state == "open" {
            notices[index].state = "okay"
            notices[index].note = note
        }
    }

    private mutating func nextId(_ prefix: String) -> String {
        counter += 1
        return "\(prefix)-\(counter)-\(UInt32.random(in: 0...UInt32.max))"
    }

    private static func millis(_ date: Date) -> Int64 { Int64(date.timeIntervalSince1970 * 1000) }
}
