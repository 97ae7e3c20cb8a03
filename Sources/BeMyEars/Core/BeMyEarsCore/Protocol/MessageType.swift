/// Every message type of BEMYEARS-PROTOCOL.md (seed §10 plus the protocol's additions).
public enum MessageType: String, Sendable, Hashable, CaseIterable, Codable {
    // Sent by clients.
    case register = "REGISTER"
    case setState = "SET_STATE"
    case heartbeat = "HEARTBEAT"
    case callRequest = "CALL_REQUEST"
    case callAccept = "CALL_ACCEPT"
    case callDecline = "CALL_DECLINE"
    case offer = "OFFER"
    case answer = "ANSWER"
    case ice = "ICE"
    case hangup = "HANGUP"
    case videoVisible = "VIDEO_VISIBLE"
    case statsUpdate = "STATS_UPDATE"
    case reportAbuse = "REPORT_ABUSE"
    /// An extension of this server: a party of a live call asks for fresh STUN/TURN servers (before an ICE
    /// restart); answered with an ICE_SERVERS of the same callId carrying `payload.iceServers`.
    case iceServers = "ICE_SERVERS"

    // Sent by the server only.
    case registered = "REGISTERED"
    case state = "STATE"
    case heartbeatAck = "HEARTBEAT_ACK"
    case presence = "PRESENCE"
    case callRinging = "CALL_RINGING"
    case busy = "BUSY"
    case callEnded = "CALL_ENDED"
    case reportReceived = "REPORT_RECEIVED"
    case error = "ERROR"

    /// Whether a client may send this type at all (some roles still may not: see ``Role/maySend(_:)``).
    /// CALL_REQUEST, CALL_ACCEPT, CALL_DECLINE and the relayed types travel both ways: the server forwards them.
    public var isSentByClients: Bool {
        switch self {
        case .register, .setState, .heartbeat, .callRequest, .callAccept, .callDecline, .offer, .answer, .ice,
            .hangup, .videoVisible, .statsUpdate, .reportAbuse, .iceServers:
            true
        case .registered, .state, .heartbeatAck, .presence, .callRinging, .busy, .callEnded, .reportReceived, .error:
            false
        }
    }
}
