public import CribCallProtocol
import Foundation

/// The words CribAlert shows people, in one place (seed 003 §6 and §10.1): calm and observational — "may",
/// "detected", "noticed" — and never a medical term. A test scans them, and every other user-facing text, for the
/// seed's prohibited terms.
public enum SafetyWording {
    /// An alert's title and what to do, as the seed words them; with the baby's name where the parent gave one
    /// ("Liam's face may be covered").
    public static func alert(_ kind: SafetyAlertKind, babyName: String? = nil) -> (title: String, detail: String) {
        let name = babyName?.trimmingCharacters(in: .whitespacesAndNewlines).nilIfEmpty
        switch kind {
        case .faceCovered:
            return (
                "\(name ?? "Baby")'s face may be covered",
                "Please check the sleep area to make sure \(name.map { "\($0)'s" } ?? "your baby's") face is clear."
            )
        case .onStomach:
            return ("\(name ?? "Baby") may have rolled onto their stomach", "Please check \(name ?? "your baby").")
        case .stillness:
            return (
                "Unusual stillness detected",
                "We haven't seen normal movement for a while. This can happen during deep sleep. "
                    + "Please take a moment to check your baby."
            )
        case .crying:
            return ("Crying detected", "Your baby sounds upset and may need you.")
        default:
            return ("Something was noticed (\(kind.rawValue))", "Please take a moment to check your baby.")
        }
    }

    /// What a parent can do from an alert, as the seed's buttons say it (§6.1–6.2).
    public enum Button: String, Sendable, Hashable, CaseIterable {
        /// Open the live camera of the monitor that raised it.
        case view
        /// "I am checking", for everyone.
        case checking
        /// "Mark as okay", for everyone.
        case okay
        /// Mute this kind of alert for 5 minutes, for everyone.
        case mute

        /// The `ALERT_ACTION` it sends, if any (``view`` only opens the stream here).
        public var action: AlertActionKind? {
            switch self {
            case .view: nil
            case .checking: .checking
            case .okay: .okay
            case .mute: .mute
            }
        }
    }

    /// An alert's buttons and their labels, most important first: for crying "Open live view" and "Mute for 5
    /// minutes"; for the others "View live camera", "I am checking" and "Mark as okay".
    public static func buttons(_ kind: SafetyAlertKind) -> [(button: Button, label: String)] {
        if kind == .crying {
            return [(.view, "Open live view"), (.mute, "Mute for \(AlertAction.defaultMuteMinutes) minutes")]
        }
        return [(.view, "View live camera"), (.checking, "I am checking"), (.okay, "Mark as okay")]
    }

    /// The label above an alert: "SAFETY ALERT" for high severity, the detector's area for medium.
    public static func tag(_ kind: SafetyAlertKind, severity: AlertSeverity) -> String {
        if severity == .high { return "SAFETY ALERT" }
        return kind == .crying ? "Listening for sounds" : "Monitoring movement"
    }

    /// One line for a status: "Monitoring active: still, on back, face visible." or "Monitoring paused: camera
    /// disconnected. You'll receive alerts again once monitoring resumes."
    public static func status(
        _ monitoring: MonitoringState, reason: String?, movement: MovementState, position: SleepPosition,
        faceVisible: Bool?
    ) -> String {
        switch monitoring {
        case .active:
            var parts = [
                movement == .moving ? "movement noticed" : movement == .still ? "still" : "movement not judged yet"
            ]
            switch position {
            case .onBack: parts.append("on back")
            case .onStomach: parts.append("may be on stomach")
            case .unknown: break
            }
            if let faceVisible { parts.append(faceVisible ? "face visible" : "face not seen") }
            return "Monitoring active: " + parts.joined(separator: ", ") + "."
        case .paused:
            return "Monitoring paused: \(reason ?? "the camera is not connected right now"). "
                + "You'll receive alerts again once monitoring resumes."
        case .stale:
            return "Monitoring cannot judge right now: \(reason ?? "the picture cannot be judged"). "
                + "You'll receive alerts again once it can."
        }
    }

    /// Where an alert stands after someone acted on it.
    public static func update(_ state: AlertState, by name: String, mutedMinutes: Int? = nil) -> String {
        switch state {
        case .checking: "\(name) is checking."
        case .okay: "\(name) marked it as okay."
        case .muted: "\(name) muted these alerts for \(mutedMinutes ?? AlertAction.defaultMuteMinutes) minutes."
        }
    }

    /// Terms no user-facing text may contain (seed 003 §10.1), lowercase.
    public static let prohibitedTerms = [
        "breathing", "oxygen", "heart rate", "sids", "suffocation", "emergency", "life-saving",
    ]
}

extension String {
    fileprivate var nilIfEmpty: String? { isEmpty ? nil : self }
}
