import Foundation

/// The call deadlines of seed §8, as BEMYEARS-PROTOCOL.md fixes them.
public struct CallTimeouts: Sendable, Hashable, Codable {
    /// CALL_REQUEST → CALL_ACCEPT/DECLINE; then RING_TIMEOUT. 10 s.
    public var ring: Duration
    /// CALL_ACCEPT → first relayed ANSWER; then CONNECT_TIMEOUT. 10 s.
    public var answer: Duration
    /// CALL_REQUEST → first VIDEO_VISIBLE `visible:true` from either party; then CONNECT_TIMEOUT. 20 s.
    public var connect: Duration

    public init(ring: Duration = .seconds(10), answer: Duration = .seconds(10), connect: Duration = .seconds(20)) {
        self.ring = ring
        self.answer = answer
        self.connect = connect
    }
}

extension Duration {
    /// The duration in seconds, as Foundation counts time.
    var timeInterval: TimeInterval {
        let parts = components
        return TimeInterval(parts.seconds) + TimeInterval(parts.attoseconds) / 1e18
    }

    /// Whole seconds, for the `…Sec` fields of the protocol.
    var wholeSeconds: Int { Int(components.seconds) }
}

extension Date {
    func adding(_ duration: Duration) -> Date {
        addingTimeInterval(duration.timeInterval)
    }
}
