public import CribCallProtocol

/// The media side of a live stream (PROTOCOL.md §9), as the services see it: WebRTC peers that produce and take
/// SDP and trickled ICE candidates. Signaling (the control channel) is the services' job; the `Media` adapter
/// implements these protocols with GStreamer's webrtcbin, and ``InMemoryMediaEngine`` is the twin for unit tests
/// of the signaling logic.

/// What a peer reports while it negotiates and streams, in order.
public enum MediaEvent: Sendable, Hashable {
    /// The local session description to send (WEBRTC_OFFER from a sender, WEBRTC_ANSWER from a receiver).
    case localDescription(sdp: String)
    /// A local ICE candidate to trickle (WEBRTC_ICE); an empty `candidate` means end of candidates.
    case localCandidate(IceCandidateMessage.Candidate)
    /// Media flows (ICE and DTLS connected; for a receiver, the first decoded audio frame arrived).
    case flowing
    /// The peer stopped: by ``MediaPeer/stop()``, or on failure (the reason says what happened).
    case ended(reason: String)
}

/// One WebRTC peer of one stream.
public protocol MediaPeer: AnyObject, Sendable {
    /// The peer's events; the stream finishes after `.ended`.
    var events: AsyncStream<MediaEvent> { get }
    /// The remote session description (the listener's answer for a sender, the monitor's offer for a receiver).
    func setRemoteDescription(sdp: String) async throws
    /// A remote ICE candidate (an empty `candidate` string ends the remote candidates).
    func addRemoteCandidate(_ candidate: IceCandidateMessage.Candidate) async throws
    /// Stops the pipeline and releases it; idempotent. `.ended` follows.
    func stop() async
}

/// Creates peers: the monitor creates senders, the listener receivers.
public protocol MediaEngine: Sendable {
    /// A sender for `mediaType` that starts at once and reports its offer as the first `.localDescription`.
    func makeSender(sessionId: String, mediaType: MediaType) async throws -> any MediaPeer
    /// A receiver that answers the offer given to ``MediaPeer/setRemoteDescription(sdp:)``.
    func makeReceiver(sessionId: String, mediaType: MediaType) async throws -> any MediaPeer
}
