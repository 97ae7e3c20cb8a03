/// The role a session registers with (seed §3.1); fixed for the session's life.
public enum Role: String, Sendable, Hashable, CaseIterable, Codable {
    /// A deaf user who places calls.
    case caller
    /// An interpreter who receives calls.
    case interpreter

    /// Whether a registered session of this role may send `type` (seed §3.2, protocol "ROLE_FORBIDDEN").
    ///
    /// Callers place calls; interpreters change their availability and answer. Both may send heartbeats, the
    /// relayed types, HANGUP and REPORT_ABUSE. Nobody may send a type only the server sends, nor REGISTER twice
    /// (REGISTER is answered separately, with BAD_STATE).
    public func maySend(_ type: MessageType) -> Bool {
        switch type {
        case .callRequest: self == .caller
        case .setState, .callAccept, .callDecline: self == .interpreter
        case .register, .heartbeat, .offer, .answer, .ice, .hangup, .videoVisible, .statsUpdate, .reportAbuse,
            .iceServers:
            true
        case .registered, .state, .heartbeatAck, .presence, .callRinging, .busy, .callEnded, .reportReceived, .error:
            false
        }
    }
}
