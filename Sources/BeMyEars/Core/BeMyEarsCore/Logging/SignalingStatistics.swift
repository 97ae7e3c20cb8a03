/// Aggregate counts for one node, logged every 5 minutes. Counts only: no identities, no media statistics.
public struct SignalingStatistics: Sendable, Hashable {
    /// Open WebSocket sessions on this node.
    public var sessions: Int
    /// Registered callers on this node.
    public var callers: Int
    /// Registered interpreters on this node.
    public var interpreters: Int
    /// Calls this node's sessions are in (ringing or connected), counted once per local party.
    public var partiesInCalls: Int
    /// Calls created on this node since the last report.
    public var callsStarted: Int
    /// Calls ended by this node since the last report.
    public var callsEnded: Int
    /// Abuse reports received by this node since the last report.
    public var abuseReports: Int

    public init(
        sessions: Int = 0,
        callers: Int = 0,
        interpreters: Int = 0,
        partiesInCalls: Int = 0,
        callsStarted: Int = 0,
        callsEnded: Int = 0,
        abuseReports: Int = 0
    ) {
        self.sessions = sessions
        self.callers = callers
        self.interpreters = interpreters
        self.partiesInCalls = partiesInCalls
        self.callsStarted = callsStarted
        self.callsEnded = callsEnded
        self.abuseReports = abuseReports
    }

    var fields: [(String, String)] {
        [
            ("sessions", String(sessions)), ("callers", String(callers)), ("interpreters", String(interpreters)),
            ("partiesInCalls", String(partiesInCalls)), ("callsStarted", String(callsStarted)),
            ("callsEnded", String(callsEnded)), ("abuseReports", String(abuseReports)),
        ]
    }
}
