public import CanonicalJSON

/// A message from a client, with its fields checked and typed.
public enum ClientMessage: Sendable, Hashable {
    /// `REGISTER {payload:{username, role}}`; the username is validated and lowercased.
    case register(Username, Role)
    /// `SET_STATE {payload:{state}}` with `AVAILABLE` or `UNAVAILABLE`.
    case setState(InterpreterState)
    /// `HEARTBEAT`.
    case heartbeat
    /// `CALL_REQUEST {to}`.
    case callRequest(to: Username)
    /// `CALL_ACCEPT {callId}`.
    case callAccept(CallID)
    /// `CALL_DECLINE {callId}`.
    case callDecline(CallID)
    /// OFFER, ANSWER, ICE, STATS_UPDATE, VIDEO_VISIBLE `{callId, payload}`; the payload is forwarded as is.
    case relay(RelayKind, CallID, payload: JSONValue?)
    /// `HANGUP {callId, payload:{reason?}}`: reason ``CallEndReason/webrtcFailed`` when the payload says
    /// `"WEBRTC_FAILED"`, else ``CallEndReason/hangup``.
    case hangup(CallID, reason: CallEndReason)
    /// `REPORT_ABUSE {callId, payload:{reason}}`. The reason is free text from a person and is neither logged
    /// nor forwarded (seed §18.1 allows only the offender's identity).
    case reportAbuse(CallID, reason: String?)
    /// `ICE_SERVERS {callId}`: fresh STUN/TURN servers for a call the sender is a party of.
    case iceServers(CallID)

    /// Checks and types the fields of `envelope`.
    /// - Throws: ``SignalingError``: INVALID_USERNAME for a bad REGISTER username, UNKNOWN_USER for a `to` that
    ///   cannot be a username, UNKNOWN_CALL for a callId that is not a UUID, ROLE_FORBIDDEN for a type only the
    ///   server sends, PROTOCOL_ERROR for a missing or malformed field.
    public init(_ envelope: Envelope) throws(SignalingError) {
        let type = envelope.type
        let payload = envelope.payload
        switch type {
        case .register:
            guard case .string(let name)? = payload?["username"] else {
                throw SignalingError(
                    code: .invalidUsername,
                    message: "REGISTER needs payload.username: \(Username.rule)."
                )
            }
            let username = try Username(validating: name)
            guard let roleName = payload?["role"]?.stringValue, let role = Role(rawValue: roleName) else {
                throw SignalingError(
                    code: .protocolError,
                    message: "REGISTER needs payload.role \"caller\" or \"interpreter\"."
                )
            }
            self = .register(username, role)
        case .setState:
            guard let name = payload?["state"]?.stringValue, let state = InterpreterState(rawValue: name),
                state == .available || state == .unavailable
            else {
                throw SignalingError(
                    code: .protocolError,
                    message: "SET_STATE needs payload.state \"AVAILABLE\" (Go Online) or \"UNAVAILABLE\" (Go Offline)."
                )
            }
            self = .setState(state)
        case .heartbeat:
            self = .heartbeat
        case .callRequest:
            guard let target = envelope.to else {
                throw SignalingError(
                    code: .protocolError,
                    message: "CALL_REQUEST needs \"to\": the username of an available interpreter."
                )
            }
            guard let username = Username(target) else {
                throw SignalingError(
                    code: .unknownUser,
                    message: "There is no interpreter named \(EnvelopeCodec.quoted(target)); pick one from the list."
                )
            }
            self = .callRequest(to: username)
        case .callAccept:
            self = .callAccept(try Self.callId(of: envelope))
        case .callDecline:
            self = .callDecline(try Self.callId(of: envelope))
        case .offer, .answer, .ice, .statsUpdate, .videoVisible:
            self = .relay(RelayKind(type)!, try Self.callId(of: envelope), payload: payload)
        case .hangup:
            let reason: CallEndReason = payload?["reason"]?.stringValue == "WEBRTC_FAILED" ? .webrtcFailed : .hangup
            self = .hangup(try Self.callId(of: envelope), reason: reason)
        case .reportAbuse:
            self = .reportAbuse(try Self.callId(of: envelope), reason: payload?["reason"]?.stringValue)
        case .iceServers:
            self = .iceServers(try Self.callId(of: envelope))
        case .registered, .state, .heartbeatAck, .presence, .callRinging, .busy, .callEnded, .reportReceived, .error:
            throw SignalingError(code: .roleForbidden, message: Self.serverOnlyMessage(type))
        }
    }

    static func serverOnlyMessage(_ type: MessageType) -> String {
        "\(type.rawValue) is sent by the server only; clients may not send it."
    }

    private static func callId(of envelope: Envelope) throws(SignalingError) -> CallID {
        guard let text = envelope.callId else {
            throw SignalingError(
                code: .protocolError,
                message: "\(envelope.type.rawValue) needs the \"callId\" of your call."
            )
        }
        guard let callId = CallID(text) else {
            throw SignalingError(
                code: .unknownCall,
                message: "There is no call with callId \(EnvelopeCodec.quoted(text)); use the callId the server sent."
            )
        }
        return callId
    }
}
