public import CanonicalJSON

/// The messages the server sends, built exactly as BEMYEARS-PROTOCOL.md shows them.
extension Envelope {
    /// `REGISTERED {payload:{username, role, heartbeatIntervalSec, presenceTtlSec, iceServers}}`.
    public static func registered(
        username: Username,
        role: Role,
        heartbeatIntervalSeconds: Int,
        presenceTTLSeconds: Int,
        iceServers: [ICEServer]
    ) -> Envelope {
        Envelope(
            type: .registered,
            payload: [
                "username": .string(username.rawValue),
                "role": .string(role.rawValue),
                "heartbeatIntervalSec": .number(JSONNumber(heartbeatIntervalSeconds)),
                "presenceTtlSec": .number(JSONNumber(presenceTTLSeconds)),
                "iceServers": .array(iceServers.map(\.jsonValue)),
            ]
        )
    }

    /// `STATE {payload:{state}}`: an interpreter's own state, after SET_STATE and whenever the server changes it.
    public static func state(_ state: InterpreterState) -> Envelope {
        Envelope(type: .state, payload: ["state": .string(state.rawValue)])
    }

    /// `HEARTBEAT_ACK`.
    public static var heartbeatAck: Envelope { Envelope(type: .heartbeatAck) }

    /// `PRESENCE {payload:{interpreters:[{username}]}}`, in the order given (the hub sorts by byte order).
    public static func presence(_ interpreters: [Username]) -> Envelope {
        Envelope(
            type: .presence,
            payload: ["interpreters": .array(interpreters.map { ["username": .string($0.rawValue)] })]
        )
    }

    /// `CALL_REQUEST {callId, from, to}` forwarded to the interpreter; with `payload.iceServers` (this server's
    /// extension) when the server hands out fresh TURN credentials for each call.
    public static func callRequest(
        _ callId: CallID,
        from caller: Username,
        to interpreter: Username,
        iceServers: [ICEServer]? = nil
    ) -> Envelope {
        Envelope(
            .callRequest,
            call: callId,
            from: caller,
            to: interpreter,
            payload: iceServers.map { ["iceServers": .array($0.map(\.jsonValue))] }
        )
    }

    /// `CALL_RINGING {callId, to, payload:{ringSec}}` to the caller (plus `iceServers` as for CALL_REQUEST).
    public static func callRinging(
        _ callId: CallID,
        to interpreter: Username,
        ringSeconds: Int,
        iceServers: [ICEServer]? = nil
    ) -> Envelope {
        var payload: [String: JSONValue] = ["ringSec": .number(JSONNumber(ringSeconds))]
        if let iceServers { payload["iceServers"] = .array(iceServers.map(\.jsonValue)) }
        return Envelope(.callRinging, call: callId, to: interpreter, payload: .object(payload))
    }

    /// `ICE_SERVERS {callId, payload:{iceServers}}`: fresh STUN/TURN servers for a party of the call (this
    /// server's extension, the answer to a client's ICE_SERVERS).
    public static func iceServers(_ callId: CallID, _ servers: [ICEServer]) -> Envelope {
        Envelope(.iceServers, call: callId, payload: ["iceServers": .array(servers.map(\.jsonValue))])
    }

    /// `CALL_ACCEPT {callId, from, to}` forwarded to the caller.
    public static func callAccept(_ callId: CallID, from interpreter: Username, to caller: Username) -> Envelope {
        Envelope(.callAccept, call: callId, from: interpreter, to: caller)
    }

    /// `CALL_DECLINE {callId, from, to}` forwarded to the caller.
    public static func callDecline(_ callId: CallID, from interpreter: Username, to caller: Username) -> Envelope {
        Envelope(.callDecline, call: callId, from: interpreter, to: caller)
    }

    /// `BUSY {to, payload:{reason:"NOT_AVAILABLE"}}` to a caller whose interpreter is not AVAILABLE, with the
    /// `callId` of the call the interpreter is in when there is one (the call that won a race for them). The id
    /// gives the loser nothing: only a call's two parties may use it.
    public static func busy(to interpreter: Username, call: CallID? = nil) -> Envelope {
        Envelope(.busy, call: call, to: interpreter, payload: ["reason": "NOT_AVAILABLE"])
    }

    /// `CALL_ENDED {callId, payload:{reason}}` to both parties.
    public static func callEnded(_ callId: CallID, reason: CallEndReason) -> Envelope {
        Envelope(.callEnded, call: callId, payload: ["reason": .string(reason.rawValue)])
    }

    /// `REPORT_RECEIVED {callId}` to the reporter of REPORT_ABUSE.
    public static func reportReceived(_ callId: CallID) -> Envelope {
        Envelope(.reportReceived, call: callId)
    }

    /// `ERROR {callId, payload:{code, message}}`; `callId` echoes the one of the refused message, if any.
    public static func error(_ error: SignalingError, callId: String? = nil) -> Envelope {
        Envelope(
            type: .error,
            callId: callId,
            payload: ["code": .string(error.code.rawValue), "message": .string(error.message)]
        )
    }

    /// OFFER, ANSWER, ICE, STATS_UPDATE or VIDEO_VISIBLE as forwarded: `from` is the sender's registered name,
    /// `payload` is the sender's payload untouched.
    public static func relayed(
        _ kind: RelayKind,
        callId: CallID,
        from sender: Username,
        to receiver: Username,
        payload: JSONValue?
    ) -> Envelope {
        Envelope(kind.messageType, call: callId, from: sender, to: receiver, payload: payload)
    }
}
