public import Foundation

/// What a ``SignalingHub`` asks the server around it to do. Implemented by the WebSocket server (and by
/// recorders in tests).
///
/// The methods are synchronous so the hub can send several messages in one step with nothing in between
/// (CALL_ENDED before the PRESENCE that follows it). Implementations must not block: enqueue and return (e.g.
/// queue on the connection and let its event loop write), preserving the order of calls per session.
public protocol SignalingOutbound: Sendable {
    /// Sends a message on a session of this node. Unknown or closed sessions are ignored.
    func send(_ envelope: Envelope, to session: SessionID)

    /// Sends PRESENCE with `interpreters` on a session of this node. The hub passes the same array to every
    /// caller of one refresh, so an implementation may encode it once for all (the default sends
    /// ``Envelope/presence(_:)``).
    func sendPresence(_ interpreters: [Username], to session: SessionID)

    /// Closes a session of this node's WebSocket with `code` (after what was sent before it). The hub has
    /// already forgotten the session; a later `disconnect` for it is a no-op.
    func close(_ session: SessionID, code: CloseCode)

    /// Hands a message to another node for its session `session` (e.g. PostgreSQL NOTIFY). That node calls its
    /// hub's ``SignalingHub/deliver(_:to:)``. Messages from one node must arrive in the order they were
    /// forwarded, and in order with ``publishPresenceChange()``: use one ordered channel for both.
    func forward(_ envelope: Envelope, to session: SessionID, on node: NodeID)

    /// Tells every other node that the set of AVAILABLE interpreters changed; they call
    /// ``SignalingHub/presenceDidChange()``. A single-node server ignores it.
    func publishPresenceChange()

    /// A log record; every field is allowed by seed §18.1 (no usernames except an abuse report's offender, no
    /// SDP, ICE, media statistics or free text from clients).
    func log(_ record: SignalingLogRecord)

    /// The hub holds back work until `time` (a PRESENCE coalesced with the changes of the next 100 ms): call
    /// ``SignalingHub/wake()`` at that time or soon after. Each call asks for one wake-up; the hub asks again
    /// if it is woken early. (``SignalingHub/tick()`` also does the work, later, should a wake-up be lost.)
    func wake(at time: Date)
}

extension SignalingOutbound {
    public func sendPresence(_ interpreters: [Username], to session: SessionID) {
        send(.presence(interpreters), to: session)
    }
}
