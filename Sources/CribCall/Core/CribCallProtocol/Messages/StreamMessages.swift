// Stream control and WebRTC signaling (seed 2.6, PROTOCOL.md §9).

/// What a stream carries.
public enum MediaType: String, Sendable, Hashable, Codable, CaseIterable {
    case audio
    case audioVideo = "audio_video"
}

/// `START_STREAM_REQUEST` (listener → monitor).
public struct StartStreamRequest: Sendable, Hashable, Codable {
    public var sessionId: String
    public var mediaType: MediaType
    public init(sessionId: String, mediaType: MediaType) {
        self.sessionId = sessionId
        self.mediaType = mediaType
    }
}

/// `START_STREAM_RESPONSE` (monitor → listener).
public struct StartStreamResponse: Sendable, Hashable, Codable {
    public var sessionId: String
    public var accepted: Bool
    public var reason: String?
    public init(sessionId: String, accepted: Bool, reason: String? = nil) {
        self.sessionId = sessionId
        self.accepted = accepted
        self.reason = reason
    }
}

/// `END_STREAM` and `PIN_STREAM`: a message naming one stream.
public struct StreamReference: Sendable, Hashable, Codable {
    public var sessionId: String
    public init(sessionId: String) { self.sessionId = sessionId }
}

/// `STREAM_ENDING_SOON` (monitor → listener): an automatic stream is about to stop.
public struct StreamEndingSoon: Sendable, Hashable, Codable {
    public var sessionId: String
    public var secondsRemaining: Int
    public init(sessionId: String, secondsRemaining: Int) {
        self.sessionId = sessionId
        self.secondsRemaining = secondsRemaining
    }
}

/// `WEBRTC_OFFER` and `WEBRTC_ANSWER`.
public struct SessionDescription: Sendable, Hashable, Codable {
    public var sessionId: String
    public var sdp: String
    public init(sessionId: String, sdp: String) {
        self.sessionId = sessionId
        self.sdp = sdp
    }
}

/// `WEBRTC_ICE`: one trickled candidate in the browser's RTCIceCandidateInit shape.
public struct IceCandidateMessage: Sendable, Hashable, Codable {
    /// RTCIceCandidateInit. An empty `candidate` string means end of candidates.
    public struct Candidate: Sendable, Hashable, Codable {
        public var candidate: String
        public var sdpMid: String?
        public var sdpMLineIndex: Int?
        public init(candidate: String, sdpMid: String?, sdpMLineIndex: Int?) {
            self.candidate = candidate
            self.sdpMid = sdpMid
            self.sdpMLineIndex = sdpMLineIndex
        }
    }

    public var sessionId: String
    public var candidate: Candidate
    public init(sessionId: String, candidate: Candidate) {
        self.sessionId = sessionId
        self.candidate = candidate
    }

    /// True for the end-of-candidates marker.
    public var isEndOfCandidates: Bool { candidate.candidate.isEmpty }
}
