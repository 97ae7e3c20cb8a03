// The in-memory twin of the `Media` adapter. Its two types live in one file, against the one-type-per-file rule,
// because they only make sense together and the twin is meant to be read in one sitting next to StreamMedia.swift.

public import CribCallProtocol
import Synchronization

/// A ``MediaEngine`` without GStreamer or sockets, for testing the signaling above the media adapter.
///
/// Every peer it makes is an ``InMemoryMediaPeer`` that behaves like a webrtcbin peer on a perfect LAN, with fixed,
/// deterministic output:
/// - a sender reports its offer (``InMemoryMediaPeer/offerSDP(sessionId:mediaType:)``) at once, then its two host
///   candidates and the end-of-candidates marker;
/// - a receiver does the same with its answer once it has been given the offer;
/// - either becomes `.flowing` once it has the remote description and at least one remote candidate;
/// - ``InMemoryMediaPeer/stop()`` ends it with `.ended(reason: "stopped")`, ``InMemoryMediaPeer/fail(reason:)``
///   with the given reason.
///
/// Each peer records what it was given, so a test can check that the signaling relayed exactly what the other side
/// produced.
public final class InMemoryMediaEngine: MediaEngine {
    private struct State {
        var peers: [InMemoryMediaPeer] = []
        var refusal: String?
        var mediaBlocked = false
    }

    private let state = Mutex(State())

    /// Creates an engine that makes peers until told otherwise (``refuse(_:)``).
    public init() {}

    /// Every peer made so far, in order.
    public var peers: [InMemoryMediaPeer] {
        state.withLock { $0.peers }
    }

    /// The peers made for `sessionId` (a monitor has one sender per stream, a listener one receiver).
    /// - Parameter sessionId: The stream's id.
    /// - Returns: The peers for that stream, oldest first.
    public func peers(sessionId: String) -> [InMemoryMediaPeer] {
        peers.filter { $0.sessionId == sessionId }
    }

    /// Makes every later `makeSender`/`makeReceiver` throw ``InMemoryMediaError`` with `reason` (nil: work again),
    /// as a real engine does when the camera or the GStreamer plugins are missing.
    /// - Parameter reason: Why peers cannot be made, or nil.
    public func refuse(_ reason: String?) {
        state.withLock { $0.refusal = reason }
    }

    /// Peers made while `blocked` negotiate (descriptions, candidates) but never flow, as on a network that drops
    /// the media's UDP while the control channel works.
    /// - Parameter blocked: Whether later peers are blocked.
    public func blockMedia(_ blocked: Bool) {
        state.withLock { $0.mediaBlocked = blocked }
    }

    /// A sender that reports its offer at once.
    /// - Throws: ``InMemoryMediaError`` while ``refuse(_:)`` is in force.
    public func makeSender(sessionId: String, mediaType: MediaType) async throws -> any MediaPeer {
        try make(.sender, sessionId: sessionId, mediaType: mediaType)
    }

    /// A receiver that answers the offer it is given.
    /// - Throws: ``InMemoryMediaError`` while ``refuse(_:)`` is in force.
    public func makeReceiver(sessionId: String, mediaType: MediaType) async throws -> any MediaPeer {
        try make(.receiver, sessionId: sessionId, mediaType: mediaType)
    }

    private func make(_ role: InMemoryMediaPeer.Role, sessionId: String, mediaType: MediaType) throws
        -> InMemoryMediaPeer
    {
        try state.withLock { state in
            if let refusal = state.refusal { throw InMemoryMediaError(message: refusal) }
            let peer = InMemoryMediaPeer(
                role: role, sessionId: sessionId, mediaType: mediaType,
                mediaBlocked: state.mediaBlocked)
            state.peers.append(peer)
            return peer
        }
    }
}

/// Why an in-memory peer refused something (the engine was told to refuse, a second remote description, or a call
/// after the peer ended).
public struct InMemoryMediaError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public var message: String
    /// The message.
    public var description: String { message }
}

/// One peer of ``InMemoryMediaEngine``: a fake webrtcbin that produces fixed SDP and candidates and records its input.
public final class InMemoryMediaPeer: MediaPeer {
    /// Which side of a stream the peer is.
    public enum Role: String, Sendable, Hashable {
        /// The monitor's side: offers.
        case sender
        /// The listener's side: answers.
        case receiver
    }

    /// The peer's side.
    public let role: Role
    /// The stream it belongs to.
    public let sessionId: String
    /// What it carries.
    public let mediaType: MediaType
    /// Its events (see ``MediaPeer/events``).
    public let events: AsyncStream<MediaEvent>
    private let emit: AsyncStream<MediaEvent>.Continuation

    private struct State {
        var remoteDescription: String?
        var remoteCandidates: [IceCandidateMessage.Candidate] = []
        var flowing = false
        var endReason: String?
        var stopCalls = 0
    }

    private let state = Mutex(State())
    private let mediaBlocked: Bool

    init(role: Role, sessionId: String, mediaType: MediaType, mediaBlocked: Bool = false) {
        self.mediaBlocked = mediaBlocked
        self.role = role
        self.sessionId = sessionId
        self.mediaType = mediaType
        (events, emit) = AsyncStream.makeStream(of: MediaEvent.self)
        if role == .sender { announceLocal() }
    }

    // MARK: what the peer produces

    /// The offer a sender reports for this stream: a fixed SDP naming the session and the media.
    /// - Parameters:
    ///   - sessionId: The stream's id.
    ///   - mediaType: Audio only, or audio and video (a second m-line).
    /// - Returns: The SDP text (CRLF line ends).
    public static func offerSDP(sessionId: String, mediaType: MediaType) -> String {
        sdp(kind: "offer", sessionId: sessionId, mediaType: mediaType, direction: "sendonly")
    }

    /// The answer a receiver reports for this stream.
    /// - Parameters:
    ///   - sessionId: The stream's id.
    ///   - mediaType: Audio only, or audio and video.
    /// - Returns: The SDP text (CRLF line ends).
    public static func answerSDP(sessionId: String, mediaType: MediaType) -> String {
        sdp(kind: "answer", sessionId: sessionId, mediaType: mediaType, direction: "recvonly")
    }

    /// The candidates a peer of `role` trickles, in order: two host candidates, then the end-of-candidates marker
    /// (an empty `candidate` string).
    /// - Parameter role: The peer's side (a sender uses port 50000…, a receiver 51000…).
    /// - Returns: Three candidates.
    public static func candidates(for role: Role) -> [IceCandidateMessage.Candidate] {
        let port = role == .sender ? 50_000 : 51_000
        return [
            .init(candidate: "candidate:1 1 UDP 2130706431 192.0.2.1 \(port) typ host", sdpMid: "0", sdpMLineIndex: 0),
            .init(
                candidate: "candidate:2 1 UDP 2130706175 192.0.2.1 \(port + 1) typ host", sdpMid: "0",
                sdpMLineIndex: 0),
            .init(candidate: "", sdpMid: "0", sdpMLineIndex: 0),
        ]
    }

    private static func sdp(kind: String, sessionId: String, mediaType: MediaType, direction: String) -> String {
        var lines = [
            "v=0", "o=- 1 1 IN IP4 192.0.2.1", "s=in-memory \(kind) \(sessionId)", "t=0 0", "a=group:BUNDLE 0",
            "m=audio 9 UDP/TLS/RTP/SAVPF 96", "a=mid:0", "a=\(direction)", "a=rtpmap:96 OPUS/48000/2",
        ]
        if mediaType == .audioVideo {
            lines[4] = "a=group:BUNDLE 0 1"
            lines += ["m=video 9 UDP/TLS/RTP/SAVPF 97", "a=mid:1", "a=\(direction)", "a=rtpmap:97 VP8/90000"]
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    private func announceLocal() {
        let description =
            role == .sender
            ? Self.offerSDP(sessionId: sessionId, mediaType: mediaType)
            : Self.answerSDP(sessionId: sessionId, mediaType: mediaType)
        emit.yield(.localDescription(sdp: description))
        for candidate in Self.candidates(for: role) {
            emit.yield(.localCandidate(candidate))
        }
    }

    // MARK: what the peer was given

    /// The remote description given so far (the answer for a sender, the offer for a receiver).
    public var remoteDescription: String? {
        state.withLock { $0.remoteDescription }
    }

    /// The remote candidates given so far, in order, the end-of-candidates marker included.
    public var remoteCandidates: [IceCandidateMessage.Candidate] {
        state.withLock { $0.remoteCandidates }
    }

    /// Whether `.flowing` was reported.
    public var isFlowing: Bool {
        state.withLock { $0.flowing }
    }

    /// Why the peer ended (`"stopped"` after ``stop()``), or nil while it runs.
    public var endReason: String? {
        state.withLock { $0.endReason }
    }

    /// How often ``stop()`` was called (it is idempotent; a test may check that it was called at all).
    public var stopCalls: Int {
        state.withLock { $0.stopCalls }
    }

    // MARK: MediaPeer

    /// Takes the remote description; a receiver then reports its answer and candidates.
    /// - Throws: ``InMemoryMediaError`` for a second description, or after the peer ended.
    public func setRemoteDescription(sdp: String) async throws {
        try state.withLock { state in
            guard state.endReason == nil else { throw InMemoryMediaError(message: "the peer has ended") }
            guard state.remoteDescription == nil else {
                throw InMemoryMediaError(message: "a remote description was already set")
            }
            state.remoteDescription = sdp
        }
        if role == .receiver { announceLocal() }
        flowIfReady()
    }

    /// Takes a remote candidate (an empty `candidate` string ends them).
    /// - Throws: ``InMemoryMediaError`` after the peer ended.
    public func addRemoteCandidate(_ candidate: IceCandidateMessage.Candidate) async throws {
        try state.withLock { state in
            guard state.endReason == nil else { throw InMemoryMediaError(message: "the peer has ended") }
            state.remoteCandidates.append(candidate)
        }
        flowIfReady()
    }

    /// Ends the peer with `.ended(reason: "stopped")`; idempotent.
    public func stop() async {
        state.withLock { $0.stopCalls += 1 }
        end(reason: "stopped")
    }

    /// Ends the peer as a failing pipeline would (the device went away, ICE failed): `.ended(reason:)`.
    /// - Parameter reason: What failed.
    public func fail(reason: String) {
        end(reason: reason)
    }

    private func flowIfReady() {
        let start = state.withLock { state in
            let ready =
                !mediaBlocked && state.endReason == nil && !state.flowing && state.remoteDescription != nil
                && state.remoteCandidates.contains { !$0.candidate.isEmpty }
            if ready { state.flowing = true }
            return ready
        }
        if start { emit.yield(.flowing) }
    }

    private func end(reason: String) {
        let first = state.withLock { state in
            guard state.endReason == nil else { return false }
            state.endReason = reason
            return true
        }
        guard first else { return }
        emit.yield(.ended(reason: reason))
        emit.finish()
    }
}
