public import CribCallProtocol
import Foundation
public import StreamMedia
import Synchronization

/// Live streams received by the app's page instead of by a GStreamer pipeline: the monitor's media goes straight
/// to the browser (DTLS-SRTP over the LAN), and this process only carries the signaling between the monitor's
/// control channel and the page (the page's answer and candidates come back through the app's API). While no page
/// is open, receivers come from `fallback` (the speakers).
public final class BrowserMediaEngine: MediaEngine {
    /// What the page must hear about a stream.
    public enum Signal: Sendable {
        case offer(sessionId: String, sdp: String, mediaType: MediaType)
        case candidate(sessionId: String, IceCandidateMessage.Candidate)
        case end(sessionId: String, reason: String)
    }

    private let fallback: (any MediaEngine)?
    private let state = Mutex(State())
    private let signal: @Sendable (Signal) -> Void

    private struct State {
        var pagesOpen = 0
        var receivers: [String: BrowserReceiver] = [:]
    }

    /// - Parameters:
    ///   - fallback: Receivers while no page is open (nil: streams need an open page).
    ///   - signal: Delivers what a page must hear (the app pushes it on its event stream).
    public init(fallback: (any MediaEngine)?, signal: @escaping @Sendable (Signal) -> Void) {
        self.fallback = fallback
        self.signal = signal
    }

    /// How many pages are open (the app keeps this up to date).
    public func setPagesOpen(_ count: Int) {
        state.withLock { $0.pagesOpen = count }
    }

    public func makeSender(sessionId: String, mediaType: MediaType) async throws -> any MediaPeer {
        throw BrowserMediaError("the app for parents receives streams; it does not send them")
    }

    public func makeReceiver(sessionId: String, mediaType: MediaType) async throws -> any MediaPeer {
        if state.withLock({ $0.pagesOpen == 0 }) {
            guard let fallback else { throw BrowserMediaError("open the app to watch or listen: no page is open") }
            return try await fallback.makeReceiver(sessionId: sessionId, mediaType: mediaType)
        }
        let receiver = BrowserReceiver(sessionId: sessionId, mediaType: mediaType, signal: signal) { [weak self] in
            self?.state.withLock { _ = $0.receivers.removeValue(forKey: sessionId) }
        }
        state.withLock { $0.receivers[sessionId] = receiver }
        return receiver
    }

    /// The page's receiver for `sessionId`, while it runs.
    func receiver(_ sessionId: String) -> BrowserReceiver? {
        state.withLock { $0.receivers[sessionId] }
    }

    /// Every receiver (to end them when the last page closes).
    var receivers: [BrowserReceiver] {
        state.withLock { Array($0.receivers.values) }
    }
}

/// One stream's receiver in the page.
final class BrowserReceiver: MediaPeer {
    let sessionId: String
    let mediaType: MediaType
    let events: AsyncStream<MediaEvent>
    private let emit: AsyncStream<MediaEvent>.Continuation
    private let signal: @Sendable (BrowserMediaEngine.Signal) -> Void
    private let onEnd: @Sendable () -> Void
    private let state = Mutex(State())

    private struct State {
        var offer: String?
        var answered = false
        var flowing = false
        var ended = false
    }

    init(
        sessionId: String, mediaType: MediaType, signal: @escaping @Sendable (BrowserMediaEngine.Signal) -> Void,
        onEnd: @escaping @Sendable () -> Void
    ) {
        self.sessionId = sessionId
        self.mediaType = mediaType
        self.signal = signal
        self.onEnd = onEnd
        (events, emit) = AsyncStream.makeStream(of: MediaEvent.self)
    }

    /// The monitor's offer, for a page that opens after it came.
    var offer: String? { state.withLock { $0.offer } }

    func setRemoteDescription(sdp: String) async throws {
        try state.withLock { state in
            guard !state.ended else { throw BrowserMediaError("the stream has ended") }
            guard state.offer == nil else { throw BrowserMediaError("the offer was already given") }
            state.offer = sdp
        }
        signal(.offer(sessionId: sessionId, sdp: sdp, mediaType: mediaType))
    }

    func addRemoteCandidate(_ candidate: IceCandidateMessage.Candidate) async throws {
        guard !state.withLock({ $0.ended }) else { throw BrowserMediaError("the stream has ended") }
        signal(.candidate(sessionId: sessionId, candidate))
    }

    /// The page's answer and its candidates (the first page to answer takes the stream).
    /// - Throws: ``BrowserMediaError`` when another page answered already or the stream ended.
    func answer(sdp: String, candidates: [IceCandidateMessage.Candidate]) throws {
        try state.withLock { state in
            guard !state.ended else { throw BrowserMediaError("the stream has ended") }
            guard state.offer != nil else { throw BrowserMediaError("the monitor has not offered this stream yet") }
            guard !state.answered else { throw BrowserMediaError("another page is already playing this stream") }
            state.answered = true
        }
        emit.yield(.localDescription(sdp: sdp))
        for candidate in candidates { emit.yield(.localCandidate(candidate)) }
        emit.yield(.localCandidate(.init(candidate: "", sdpMid: nil, sdpMLineIndex: nil)))
    }

    /// The page plays the stream's media.
    /// - Throws: ``BrowserMediaError`` before the page's answer was taken, or after the stream ended.
    func markFlowing() throws {
        let first = try state.withLock { state in
            guard state.answered, !state.ended else {
                throw BrowserMediaError("the stream cannot play before its answer, or after it ended")
            }
            defer { state.flowing = true }
            return !state.flowing
        }
        if first { emit.yield(.flowing) }
    }

    func stop() async {
        end(reason: "stopped")
    }

    /// Ends the stream (stopped, the page closed it, or its last page went away).
    func end(reason: String) {
        let first = state.withLock { state in
            defer { state.ended = true }
            return !state.ended
        }
        guard first else { return }
        signal(.end(sessionId: sessionId, reason: reason))
        onEnd()
        emit.yield(.ended(reason: reason))
        emit.finish()
    }
}

/// Why a page's stream cannot go on, in words.
struct BrowserMediaError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
