public import Foundation

/// How lengths of time are written to people: the recording timer, positions in a recording, history durations.
/// Fractions of a second are dropped (a timer shows 00:59 until the 60th second is complete); negative or
/// non-finite lengths count as zero.
public enum ElapsedTime {
    /// The recording screen's timer: `MM:SS` (`05:07`), and `H:MM:SS` from one hour on (`1:02:03`).
    public static func timer(_ seconds: TimeInterval) -> String {
        let (hours, minutes, secs) = split(seconds)
        if hours > 0 { return "\(hours):\(pad(minutes, to: 2)):\(pad(secs, to: 2))" }
        return "\(pad(minutes, to: 2)):\(pad(secs, to: 2))"
    }

    /// A position inside a recording, always with hours: `00:12:03`.
    public static func position(_ seconds: TimeInterval) -> String {
        let (hours, minutes, secs) = split(seconds)
        return "\(pad(hours, to: 2)):\(pad(minutes, to: 2)):\(pad(secs, to: 2))"
    }

    /// A duration in the history list as the seed writes it: `12m 34s`, `45s`, `2h 05m 00s`.
    public static func duration(_ seconds: TimeInterval) -> String {
        let (hours, minutes, secs) = split(seconds)
        if hours > 0 { return "\(hours)h \(pad(minutes, to: 2))m \(pad(secs, to: 2))s" }
        if minutes > 0 { return "\(minutes)m \(pad(secs, to: 2))s" }
        return "\(secs)s"
    }

    private static func split(_ seconds: TimeInterval) -> (hours: Int, minutes: Int, seconds: Int) {
        let whole = seconds.isFinite && seconds > 0 ? Int(min(seconds, 1e12).rounded(.down)) : 0
        return (whole / 3600, whole / 60 % 60, whole % 60)
    }
}
