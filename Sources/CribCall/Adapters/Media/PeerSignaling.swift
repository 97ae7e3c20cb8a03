import CribCallProtocol
import StreamMedia

/// The signaling side of one WebRTC peer as a pure state machine: which description exists, which media lines and
/// fingerprints the remote side announced, whether candidates may still trickle, when media counts as flowing, and
/// why the run ends. ``WebRTCPipeline`` feeds it webrtcbin's callbacks and the caller's requests (under its lock, so
/// events keep their order) and performs what it returns; nothing here touches GStreamer or a clock.
struct PeerSignaling: Sendable {
    let isSender: Bool
    let sessionId: String
    /// Why the run ends (a stop request or a failure); the first reason wins. Nothing is published after it.
    private(set) var endReason: String?
    private var createdLocalDescription = false
    /// A sender's offer as webrtcbin created it, set locally only when the answer arrives (see
    /// ``WebRTCPipeline`` on why).
    private var pendingLocalOffer: String?
    private var localMids: [String?] = []
    private var remoteMids: [String?] = []
    /// The remote description's `a=fingerprint` values, to check the DTLS certificate against.
    private(set) var remoteFingerprints: [String] = []
    private var hasRemoteDescription = false
    private var sentEndOfCandidates = false
    private var connected = false
    private var decodedAudio = false
    private var flowing = false

    init(isSender: Bool, sessionId: String) {
        self.isSender = isSender
        self.sessionId = sessionId
    }

    var hasEnded: Bool { endReason != nil }

    /// Whether media flows (the `.flowing` event was published).
    var isFlowing: Bool { flowing }

    /// Records why the run ends; false if it was already ending.
    mutating func end(_ reason: String) -> Bool {
        guard endReason == nil else { return false }
        endReason = reason
        return true
    }

    /// webrtcbin asks for negotiation: true once, for a sender, to create its offer.
    mutating func negotiationNeeded() -> Bool {
        guard isSender, !createdLocalDescription else { return false }
        createdLocalDescription = true
        return true
    }

    /// webrtcbin created our offer or answer (`created`); `published` is it with the device's real fingerprint.
    /// Returns the event to send, if the run goes on. A sender keeps its offer to set it locally later.
    mutating func localDescriptionCreated(_ created: String, published: String) -> MediaEvent? {
        localMids = SessionDescriptionText.mids(in: published)
        if isSender { pendingLocalOffer = created }
        return hasEnded ? nil : .localDescription(sdp: published)
    }

    /// The remote answer (sender) or offer (receiver) arrives. A sender gets back its own offer, to set locally
    /// first (ICE gathering starts only now).
    ///
    /// - Throws: ``MediaError/Code/ended``, or ``MediaError/Code/invalidState`` for a second description or an
    ///   answer before our offer.
    mutating func acceptRemoteDescription(_ sdp: String) throws(MediaError) -> String? {
        let expected = isSender ? "an answer" : "an offer"
        if hasEnded { throw MediaError(code: .ended, message: "the stream \(sessionId) has ended") }
        if hasRemoteDescription {
            throw MediaError(code: .invalidState, message: "the stream \(sessionId) already has \(expected)")
        }
        if isSender && (localMids.isEmpty || pendingLocalOffer == nil) {
            throw MediaError(code: .invalidState, message: "an answer arrived before the offer was sent")
        }
        hasRemoteDescription = true
        remoteMids = SessionDescriptionText.mids(in: sdp)
        remoteFingerprints = SessionDescriptionText.fingerprints(in: sdp)
        defer { pendingLocalOffer = nil }
        return pendingLocalOffer
    }

    /// The media line a remote candidate belongs to: its index, else its mid's line, else the first.
    ///
    /// - Throws: ``MediaError/Code/ended``, or ``MediaError/Code/invalidState`` for a line the session lacks.
    func remoteCandidateLine(_ candidate: IceCandidateMessage.Candidate) throws(MediaError) -> Int {
        if hasEnded { throw MediaError(code: .ended, message: "the stream \(sessionId) has ended") }
        let index: Int
        if let line = candidate.sdpMLineIndex {
            index = line
        } else if let mid = candidate.sdpMid, let line = remoteMids.firstIndex(of: mid) {
            index = line
        } else {
            index = 0
        }
        guard index >= 0, remoteMids.isEmpty || index < remoteMids.count else {
            throw MediaError(
                code: .invalidState,
                message: "ICE candidate for media line \(index), but the session has \(remoteMids.count)"
            )
        }
        return index
    }

    /// A local candidate for media line `mline`: the event to trickle, unless the candidates have ended.
    func localCandidate(mline: Int, _ candidate: String) -> MediaEvent? {
        guard !hasEnded, !sentEndOfCandidates else { return nil }
        let mid = mline < localMids.count ? localMids[mline] : nil
        return .localCandidate(.init(candidate: candidate, sdpMid: mid, sdpMLineIndex: mline))
    }

    /// Gathering is complete: the empty candidate that ends ours, once.
    mutating func gatheringComplete() -> MediaEvent? {
        guard !hasEnded, !sentEndOfCandidates else { return nil }
        sentEndOfCandidates = true
        return .localCandidate(.init(candidate: "", sdpMid: localMids.first ?? nil, sdpMLineIndex: 0))
    }

    /// ICE and DTLS are up and the remote certificate matched its fingerprint: `.flowing` for a sender (a
    /// receiver also waits for its first decoded audio).
    mutating func verifiedConnection() -> MediaEvent? {
        connected = true
        return markFlowing()
    }

    /// A receiver decoded its first audio: `.flowing` if also connected.
    mutating func decodedFirstAudio() -> MediaEvent? {
        decodedAudio = true
        return markFlowing()
    }

    private mutating func markFlowing() -> MediaEvent? {
        guard !hasEnded, !flowing, connected, isSender || decodedAudio else { return nil }
        flowing = true
        return .flowing
    }
}

/// The remote DTLS certificate held against the remote description's fingerprints, the moment ICE and DTLS say
/// they are connected. Fails closed: a certificate that does not match ends the stream, and one that cannot be read
/// (a loaded machine may report CONNECTED before every decoder shows it) is read again, up to a limit.
enum CertificateCheck {
    /// How often the certificate is read again, and how many times.
    static let retryInterval = Duration.milliseconds(20)
    static let maxAttempts = 100

    enum Outcome: Sendable, Hashable {
        /// Every decoder shows a certificate that matches.
        case verified
        /// Read again after ``retryInterval``.
        case retry
        /// The stream must end, for this reason.
        case refused(String)
    }

    /// Judges attempt `attempt` (0 first): `peerPEMs` is each DTLS decoder's `peer-pem` (nil: not readable yet).
    static func judge(peerPEMs: [String?], fingerprints: [String], attempt: Int) -> Outcome {
        var unread = peerPEMs.isEmpty
        for pem in peerPEMs {
            guard let pem else {
                unread = true
                continue
            }
            guard let der = SessionDescriptionText.firstCertificateDER(inPEM: pem),
                SessionDescriptionText.fingerprintsMatch(fingerprints, certificateDER: der)
            else {
                return .refused(
                    "the remote DTLS certificate does not match the fingerprint in its session description: "
                        + "the stream was refused (someone may be intercepting it)"
                )
            }
        }
        guard unread else { return .verified }
        guard attempt + 1 < maxAttempts else {
            return .refused(
                "the remote DTLS certificate could not be read to check its fingerprint: the stream was refused"
            )
        }
        return .retry
    }
}
