public import CanonicalJSON

/// One protocol message: `{"type", "callId", "from", "to", "payload"}` exactly as seed §10, unused fields
/// omitted.
///
/// `callId`, `from` and `to` are kept as the strings that were sent: a callId that is not a UUID, or a `to`
/// that is not a valid username, is a question for the signaling logic (UNKNOWN_CALL, UNKNOWN_USER), not a
/// malformed message. `payload` is always an object when present.
public struct Envelope: Sendable, Hashable {
    public var type: MessageType
    public var callId: String?
    public var from: String?
    public var to: String?
    public var payload: JSONValue?

    public init(
        type: MessageType,
        callId: String? = nil,
        from: String? = nil,
        to: String? = nil,
        payload: JSONValue? = nil
    ) {
        self.type = type
        self.callId = callId
        self.from = from
        self.to = to
        self.payload = payload
    }

    /// Convenience for building server messages.
    init(
        _ type: MessageType,
        call callId: CallID?,
        from: Username? = nil,
        to: Username? = nil,
        payload: JSONValue? = nil
    ) {
        self.init(type: type, callId: callId?.rawValue, from: from?.rawValue, to: to?.rawValue, payload: payload)
    }
}
