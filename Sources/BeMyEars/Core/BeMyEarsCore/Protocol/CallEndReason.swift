/// Why a call ended; the `reason` of CALL_ENDED (except ``declined``, which is told with CALL_DECLINE).
///
/// Seed §7.3's paths map to these: hangup → HANGUP; WebRTC failure and an ICE failure the client sees →
/// WEBRTC_FAILED (HANGUP with that reason); ICE or offer/answer taking too long → CONNECT_TIMEOUT (server
/// deadline); heartbeat expiration → HEARTBEAT_EXPIRED; WebSocket disconnect, app crash or force quit →
/// DISCONNECTED (or HEARTBEAT_EXPIRED when the socket lingers silently).
public enum CallEndReason: String, Sendable, Hashable, CaseIterable, Codable {
    case ringTimeout = "RING_TIMEOUT"
    case connectTimeout = "CONNECT_TIMEOUT"
    case hangup = "HANGUP"
    case webrtcFailed = "WEBRTC_FAILED"
    case heartbeatExpired = "HEARTBEAT_EXPIRED"
    case disconnected = "DISCONNECTED"
    /// The interpreter declined while ringing: the caller gets CALL_DECLINE and no CALL_ENDED follows.
    case declined = "DECLINED"
}
