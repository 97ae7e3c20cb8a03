public import CanonicalJSON

/// One control-channel message. Every known type has a case; anything else decodes to `.unknown`, which a
/// session answers with UNSUPPORTED_MESSAGE (PROTOCOL.md §4).
public enum ControlMessage: Sendable, Hashable {
    case pairRequest(PairRequest)
    case pairAccepted(PairAccepted)
    case pairRejected(PairRejected)
    case pinPairingInit(PinPairingInit)
    case pinRequired(PinRequired)
    case pinSubmit(PinSubmit)
    case noiseEvent(NoiseEvent)
    case eventsSince(EventsSince)
    case startStreamRequest(StartStreamRequest)
    case startStreamResponse(StartStreamResponse)
    case endStream(StreamReference)
    case pinStream(StreamReference)
    case streamEndingSoon(StreamEndingSoon)
    case webrtcOffer(SessionDescription)
    case webrtcAnswer(SessionDescription)
    case webrtcIce(IceCandidateMessage)
    case ping(Ping)
    case pong(Ping)
    case unpair(Unpair)
    case unpaired(Unpaired)
    case error(ErrorMessage)
    case safetyStatus(SafetyStatus)
    case safetyAlert(SafetyAlert)
    case alertAction(AlertAction)
    case alertUpdated(AlertUpdated)
    case monitorState(MonitorState)
    /// A message of a type this version does not know; `body` is the whole JSON object.
    case unknown(type: String, body: JSONValue)

    /// The known type, or nil for `.unknown`.
    public var type: ControlMessageType? {
        switch self {
        case .pairRequest: .pairRequest
        case .pairAccepted: .pairAccepted
        case .pairRejected: .pairRejected
        case .pinPairingInit: .pinPairingInit
        case .pinRequired: .pinRequired
        case .pinSubmit: .pinSubmit
        case .noiseEvent: .noiseEvent
        case .eventsSince: .eventsSince
        case .startStreamRequest: .startStreamRequest
        case .startStreamResponse: .startStreamResponse
        case .endStream: .endStream
        case .pinStream: .pinStream
        case .streamEndingSoon: .streamEndingSoon
        case .webrtcOffer: .webrtcOffer
        case .webrtcAnswer: .webrtcAnswer
        case .webrtcIce: .webrtcIce
        case .ping: .ping
        case .pong: .pong
        case .unpair: .unpair
        case .unpaired: .unpaired
        case .error: .error
        case .safetyStatus: .safetyStatus
        case .safetyAlert: .safetyAlert
        case .alertAction: .alertAction
        case .alertUpdated: .alertUpdated
        case .monitorState: .monitorState
        case .unknown: nil
        }
    }

    /// The wire `type` string.
    public var typeName: String {
        if case .unknown(let type, _) = self { return type }
        return type?.rawValue ?? ""
    }

    /// Convenience for the common error reply.
    public static func error(_ code: ErrorCode, _ message: String, inReplyTo: String? = nil) -> ControlMessage {
        .error(ErrorMessage(code: code, message: message, inReplyTo: inReplyTo))
    }
}
