public import Foundation

/// One server log record, limited to what seed §18.1 allows: timestamp, event type, callId, sessionId, role,
/// the offender's identity for abuse reports, and periodic user statistics.
///
/// The hub creates these; the server passes ``line`` or ``metadata`` to its logger.
public struct SignalingLogRecord: Sendable, Hashable {
    public let timestamp: Date
    public let event: SignalingLogEvent
    public let callId: CallID?
    public let sessionId: SessionID?
    public let role: Role?
    /// Set only for ``SignalingLogEvent/abuseReported``: the reported party.
    public let offender: Username?

    init(
        timestamp: Date,
        event: SignalingLogEvent,
        callId: CallID? = nil,
        sessionId: SessionID? = nil,
        role: Role? = nil,
        offender: Username? = nil
    ) {
        self.timestamp = timestamp
        self.event = event
        self.callId = callId
        self.sessionId = sessionId
        self.role = role
        if case .abuseReported = event { self.offender = offender } else { self.offender = nil }
    }

    /// `YYYY-MM-DD HH:MM:SS` in UTC.
    public var formattedTimestamp: String {
        let parts = Self.calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: timestamp)
        func two(_ value: Int?) -> String {
            let value = value ?? 0
            return value < 10 ? "0\(value)" : String(value)
        }
        let year = String(parts.year ?? 0)
        let paddedYear = String(repeating: "0", count: max(0, 4 - year.count)) + year
        return "\(paddedYear)-\(two(parts.month))-\(two(parts.day)) "
            + "\(two(parts.hour)):\(two(parts.minute)):\(two(parts.second))"
    }

    /// The fields after the timestamp, in a fixed order: `event`, the event's details, `callId`, `sessionId`,
    /// `role`, `offender`.
    public var fields: [(name: String, value: String)] {
        var fields: [(name: String, value: String)] = [("event", event.name)]
        fields += event.details.map { (name: $0.0, value: $0.1) }
        if let callId { fields.append(("callId", callId.rawValue)) }
        if let sessionId { fields.append(("sessionId", sessionId.rawValue)) }
        if let role { fields.append(("role", role.rawValue)) }
        if let offender { fields.append(("offender", offender.rawValue)) }
        return fields
    }

    /// The fields as a dictionary, for structured loggers.
    public var metadata: [String: String] {
        Dictionary(fields.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
    }

    /// One line: `2025-01-31 12:00:00 event=call_ended reason=HANGUP callId=… sessionId=… role=caller`.
    public var line: String {
        ([formattedTimestamp] + fields.map { "\($0.name)=\($0.value)" }).joined(separator: " ")
    }

    private static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0)!
        return calendar
    }()
}
