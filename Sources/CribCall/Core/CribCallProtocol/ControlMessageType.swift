/// Every message type the control channel knows (seed 2.3, 2.5.3, 2.6, PROTOCOL.md's additions and §11).
public enum ControlMessageType: String, Sendable, Hashable, CaseIterable, Codable {
    case pairRequest = "PAIR_REQUEST"
    case pairAccepted = "PAIR_ACCEPTED"
    case pairRejected = "PAIR_REJECTED"
    case pinPairingInit = "PIN_PAIRING_INIT"
    case pinRequired = "PIN_REQUIRED"
    case pinSubmit = "PIN_SUBMIT"
    case noiseEvent = "NOISE_EVENT"
    case eventsSince = "EVENTS_SINCE"
    case startStreamRequest = "START_STREAM_REQUEST"
    case startStreamResponse = "START_STREAM_RESPONSE"
    case endStream = "END_STREAM"
    case pinStream = "PIN_STREAM"
    case streamEndingSoon = "STREAM_ENDING_SOON"
    case webrtcOffer = "WEBRTC_OFFER"
    case webrtcAnswer = "WEBRTC_ANSWER"
    case webrtcIce = "WEBRTC_ICE"
    case ping = "PING"
    case pong = "PONG"
    case unpair = "UNPAIR"
    case unpaired = "UNPAIRED"
    case error = "ERROR"
    case safetyStatus = "SAFETY_STATUS"
    case safetyAlert = "SAFETY_ALERT"
    case alertAction = "ALERT_ACTION"
    case alertUpdated = "ALERT_UPDATED"
    case monitorState = "MONITOR_STATE"

    /// The pairing messages an untrusted listener may send (PROTOCOL.md §4).
    public var isPairingRequest: Bool {
        switch self {
        case .pairRequest, .pinPairingInit, .pinSubmit: true
        default: false
        }
    }

    /// Whether a listener (the QUIC client) sends this type to a monitor.
    public var isSentByListener: Bool {
        switch self {
        case .pairRequest, .pinPairingInit, .pinSubmit, .eventsSince, .startStreamRequest, .endStream, .pinStream,
            .webrtcAnswer, .webrtcIce, .ping, .pong, .unpair, .error, .alertAction:
            true
        case .pairAccepted, .pairRejected, .pinRequired, .noiseEvent, .startStreamResponse, .streamEndingSoon,
            .webrtcOffer, .unpaired, .safetyStatus, .safetyAlert, .alertUpdated, .monitorState:
            false
        }
    }

    /// Whether a monitor (the QUIC server) sends this type to a listener.
    public var isSentByMonitor: Bool {
        switch self {
        case .pairAccepted, .pairRejected, .pinRequired, .noiseEvent, .startStreamResponse, .endStream,
            .streamEndingSoon, .webrtcOffer, .webrtcIce, .ping, .pong, .unpaired, .error, .safetyStatus, .safetyAlert,
            .alertUpdated, .monitorState:
            true
        case .pairRequest, .pinPairingInit, .pinSubmit, .eventsSince, .startStreamRequest, .pinStream,
            .webrtcAnswer, .unpair, .alertAction:
            false
        }
    }
}
