/// What a log record is about. Every case carries only protocol enumerations, never text from a client, so a
/// record cannot leak an SDP body, an ICE candidate or a username by construction (seed §18.2).
public enum SignalingLogEvent: Sendable, Hashable {
    case sessionOpened
    case registered
    case registrationRefused(ErrorCode)
    case stateChanged(InterpreterState)
    case callRequested
    case callBusy
    case callAccepted
    case callEnded(CallEndReason)
    case abuseReported
    /// An ERROR other than RATE_LIMITED was sent.
    case messageRefused(ErrorCode)
    /// A session ran out of rate-limit tokens (logged once per run of refused messages).
    case rateLimited
    /// The server closed a session's socket.
    case sessionClosed(CloseCode)
    /// A session is gone: ``CallEndReason/disconnected`` or ``CallEndReason/heartbeatExpired``.
    case sessionEnded(CallEndReason)
    /// The periodic user statistics (seed §18.1: every 5 minutes).
    case statistics(SignalingStatistics)
    /// The store failed; the client got INTERNAL_ERROR.
    case internalError

    /// The event type as logged, e.g. `call_ended`.
    public var name: String {
        switch self {
        case .sessionOpened: "session_opened"
        case .registered: "registered"
        case .registrationRefused: "registration_refused"
        case .stateChanged: "state_changed"
        case .callRequested: "call_requested"
        case .callBusy: "call_busy"
        case .callAccepted: "call_accepted"
        case .callEnded: "call_ended"
        case .abuseReported: "abuse_reported"
        case .messageRefused: "message_refused"
        case .rateLimited: "rate_limited"
        case .sessionClosed: "session_closed"
        case .sessionEnded: "session_ended"
        case .statistics: "statistics"
        case .internalError: "internal_error"
        }
    }

    /// The event's detail fields, in a fixed order.
    var details: [(String, String)] {
        switch self {
        case .registrationRefused(let code), .messageRefused(let code): [("code", code.rawValue)]
        case .stateChanged(let state): [("state", state.rawValue)]
        case .callEnded(let reason), .sessionEnded(let reason): [("reason", reason.rawValue)]
        case .sessionClosed(let code): [("closeCode", String(code.rawValue))]
        case .statistics(let statistics): statistics.fields
        case .sessionOpened, .registered, .callRequested, .callBusy, .callAccepted, .abuseReported, .rateLimited,
            .internalError:
            []
        }
    }
}
