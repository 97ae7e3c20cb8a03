public import Foundation

/// A stretch of a recording with no audio (the input device was lost and came back), kept as a marker instead of
/// silence passed off as recorded: "14 s missing at 00:12:03".
public struct Gap: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Where the gap sits in the recording's timeline, seconds from its start.
    public var start: TimeInterval
    /// How long no audio was captured, in seconds.
    public var length: TimeInterval
    /// Why, as the input reported it (e.g. "cannot record from PulseAudio (Connection refused) …"), if known.
    public var reason: String?

    public init(start: TimeInterval, length: TimeInterval, reason: String? = nil) {
        self.start = start
        self.length = length
        self.reason = reason
    }

    /// `14 s missing at 00:12:03`; a gap under half a second reads `<1 s missing at …`.
    public var description: String {
        let seconds = length.isFinite ? Int(max(0, min(length, 1e12)).rounded()) : 0
        let amount = seconds == 0 ? "<1 s" : "\(seconds) s"
        return "\(amount) missing at \(ElapsedTime.position(start))"
    }
}
