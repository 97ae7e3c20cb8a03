/// Something that happens to a call. ``CallRecord/apply(_:at:)`` decides what it does.
public enum CallEvent: Sendable, Hashable {
    /// CALL_ACCEPT from a session.
    case accept(by: SessionID)
    /// CALL_DECLINE from a session.
    case decline(by: SessionID)
    /// HANGUP from a session; `reason` is ``CallEndReason/hangup`` or ``CallEndReason/webrtcFailed``.
    case hangUp(by: SessionID, reason: CallEndReason)
    /// A party's session ended: ``CallEndReason/disconnected`` or ``CallEndReason/heartbeatExpired``.
    case leave(SessionID, reason: CallEndReason)
    /// OFFER, ANSWER, ICE, STATS_UPDATE or VIDEO_VISIBLE from a session; `videoVisible` is true for a
    /// VIDEO_VISIBLE whose payload says `visible: true`.
    case relay(RelayKind, by: SessionID, videoVisible: Bool = false)
    /// A node's timer: end the call if one of its deadlines has passed.
    case expire
}
