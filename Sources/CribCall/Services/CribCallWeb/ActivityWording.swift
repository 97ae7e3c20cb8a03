import CribCallProtocol
import CribCallStore
import Foundation
import SafetyDetection

/// One line of the app's activity and history: what happened, told as resolved, in the past tense, without scores
/// (seed 003 §7.1).
struct ActivityItem: Sendable, Hashable {
    enum Tone: String, Sendable {
        case ok, info, attention
    }

    var timestamp: Int64
    var kind: String
    var title: String
    var detail: String
    var tone: Tone
    /// The monitor it came from (on a listener, which hears several).
    var monitorName: String?
}

/// The words of the activity timeline.
enum ActivityWording {
    /// An event of the log (a noise or a safety alert), with how the alert ended if it was acted on; `heard`: told
    /// by a listener (which was alerted), not by the monitor (which told its listeners).
    static func item(_ event: NoiseEventRecord, update: AlertUpdateRecord?, heard: Bool = false) -> ActivityItem {
        guard event.isSafetyAlert else {
            let title = event.kind == "noise" ? "Sound noticed" : "\(event.kind.capitalized) noticed"
            return ActivityItem(
                timestamp: event.timestamp, kind: event.kind, title: title,
                detail: heard ? "You were alerted here." : "Paired devices were told.", tone: .info)
        }
        let title: String
        switch SafetyAlertKind(rawValue: event.kind) {
        case .crying: title = "Crying noticed"
        case .faceCovered: title = "Face may have been covered"
        case .onStomach: title = "Baby may have rolled onto their stomach"
        case .stillness: title = "Unusual stillness noticed"
        default: title = "Something was noticed"
        }
        return ActivityItem(
            timestamp: event.timestamp, kind: event.kind, title: title, detail: resolution(update),
            tone: update?.state == "okay" ? .ok : .attention)
    }

    /// How an alert ended: "Checked by Mum.", "Marked as okay by Dad.", or that it was sent.
    static func resolution(_ update: AlertUpdateRecord?) -> String {
        guard let update else { return "Alert sent to paired devices." }
        switch update.state {
        case "checking": return "Checked by \(update.byName)."
        case "okay": return "Marked as okay by \(update.byName); monitoring continued."
        case "muted": return "Muted for a few minutes by \(update.byName)."
        default: return "Seen by \(update.byName)."
        }
    }

    /// A run's start and (when over) its end: the monitor's monitoring, or a listener's listening.
    static func items(_ session: MonitoringSessionRecord, listening: Bool) -> [ActivityItem] {
        let words =
            listening
            ? (
                started: "Listening started", detail: "This device listened for its monitors.",
                stopped: "Listening stopped", stoppedDetail: "This device stopped listening."
            )
            : (
                started: "Monitoring started", detail: "System active.", stopped: "Monitoring stopped",
                stoppedDetail: "The monitor was turned off."
            )
        var items = [
            ActivityItem(
                timestamp: session.startedAt, kind: listening ? "listening_started" : "monitoring_started",
                title: words.started, detail: words.detail, tone: .info)
        ]
        if let end = session.endedAt {
            items.append(
                ActivityItem(
                    timestamp: end, kind: listening ? "listening_stopped" : "monitoring_stopped",
                    title: words.stopped, detail: words.stoppedDetail, tone: .info))
        }
        return items
    }
}
