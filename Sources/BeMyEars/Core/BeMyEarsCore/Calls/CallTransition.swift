/// What an event did to a call; returned by ``CallRecord/apply(_:at:)`` and, with the record, by the store.
public enum CallTransition: Sendable, Hashable {
    /// RINGING → accepted: the interpreter is now IN_CALL; forward CALL_ACCEPT to the caller.
    case accepted
    /// Forward the message to this party.
    case relay(to: CallParty)
    /// The call ended now, for this reason (this event ended it: it happens once per call). The reason can be a
    /// deadline's even when the event was something else, e.g. a CALL_ACCEPT arriving after the ring deadline
    /// ends the call with RING_TIMEOUT.
    case ended(CallEndReason)
    /// ``CallEvent/expire`` on a call none of whose deadlines has passed.
    case notDue
    /// The event is refused; the call is unchanged.
    case rejected(CallRejection)
}

/// Why an event is refused; each maps to one ERROR code.
public enum CallRejection: Sendable, Hashable {
    /// The call is unknown or has ended: UNKNOWN_CALL.
    case unknownCall
    /// The sender's session is not one of the call's two: NOT_A_PARTY.
    case notAParty
    /// The sender is a party but on the wrong side (the caller accepting): ROLE_FORBIDDEN.
    case roleForbidden
    /// CALL_ACCEPT / CALL_DECLINE after the call was accepted: BAD_STATE.
    case notRinging
    /// A relayed message before CALL_ACCEPT: BAD_STATE.
    case notAccepted

    public var errorCode: ErrorCode {
        switch self {
        case .unknownCall: .unknownCall
        case .notAParty: .notAParty
        case .roleForbidden: .roleForbidden
        case .notRinging, .notAccepted: .badState
        }
    }
}
