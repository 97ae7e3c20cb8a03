import CanonicalJSON
import CribCallProtocol
import Foundation
import StreamMedia

/// The live view on the monitor's own screen: a WebRTC stream from the monitor's pipeline (the same senders
/// listeners get, fed by the shared camera and microphone) to the page, signaled over the app's API. Not trickled:
/// `POST api/live` answers the offer, the page's answer carries its candidates, and the reply to it the monitor's
/// (webrtcbin gathers once the answer is set).
extension MonitorWebApp {
    /// How many pages may watch at once (each is an encoder).
    static let liveLimit = 2
    /// How long the pipeline may take to make its offer.
    static let gatheringTimeout: Duration = .seconds(5)
    /// How long the answer's reply waits for the monitor's candidates (host candidates come within milliseconds).
    static let answerGatheringTimeout: Duration = .seconds(2)

    /// One page's live view: its sender, and what it reported.
    struct LiveView {
        let peer: any MediaPeer
        var sdp: String?
        var candidates: [IceCandidateMessage.Candidate] = []
        /// The end of candidates came (or media already flows).
        var gathered = false
        /// How many of ``candidates`` the page has been given.
        var sent = 0
        var flowing = false
    }

    /// Starts a live view: a sender for `mediaType`, its offer and candidates once gathered.
    /// - Returns: `{sessionId, sdp, candidates}`, or why not.
    func startLive(_ mediaType: MediaType) async -> Result<JSONValue, LiveRefusal> {
        guard let mediaEngine else {
            return .failure(
                LiveRefusal(
                    "live view is off: GStreamer's WebRTC plugins are missing "
                        + "(apt-get install gstreamer1.0-nice gstreamer1.0-plugins-bad)"))
        }
        guard camera != nil || mediaType == .audio else {
            return .failure(LiveRefusal("this monitor watches no camera: start it with --safety for a live view"))
        }
        while live.count >= Self.liveLimit, let oldest = liveOrder.first { await endLive(oldest) }
        let sessionId = UUID().uuidString.lowercased()
        let peer: any MediaPeer
        do {
            peer = try await mediaEngine.makeSender(sessionId: sessionId, mediaType: mediaType)
        } catch {
            return .failure(LiveRefusal("the live view cannot start: \(error)"))
        }
        live[sessionId] = LiveView(peer: peer)
        liveOrder.append(sessionId)
        // One task reads the peer's events for the whole stream (an AsyncStream has one reader).
        Task {
            for await event in peer.events { await self.liveEvent(event, of: sessionId) }
            await self.liveEnded(sessionId)
        }
        // webrtcbin gathers once the answer is set: the offer goes out as soon as it exists, with whatever
        // candidates came with it; the rest come back with the answer's reply.
        let deadline = ContinuousClock.now + Self.gatheringTimeout
        while let view = live[sessionId], view.sdp == nil, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        guard var view = live[sessionId], let sdp = view.sdp else {
            await endLive(sessionId)
            return .failure(LiveRefusal("the live view's pipeline made no offer"))
        }
        let candidates = view.candidates
        view.sent = candidates.count
        live[sessionId] = view
        return .success([
            "sessionId": .string(sessionId), "sdp": .string(sdp), "candidates": .array(candidates.map(WebAPI.json)),
        ])
    }

    private func liveEvent(_ event: MediaEvent, of sessionId: String) {
        guard var view = live[sessionId] else { return }
        switch event {
        case .localDescription(let sdp):
            view.sdp = sdp
        case .localCandidate(let candidate):
            if candidate.candidate.isEmpty { view.gathered = true } else { view.candidates.append(candidate) }
        case .flowing:
            view.flowing = true
            view.gathered = true
            schedulePush()
        case .ended:
            live[sessionId] = view
            liveEnded(sessionId)
            return
        }
        live[sessionId] = view
    }

    private func liveEnded(_ sessionId: String) {
        guard live.removeValue(forKey: sessionId) != nil else { return }
        liveOrder.removeAll { $0 == sessionId }
        schedulePush()
    }

    /// The page's answer and its candidates.
    /// The page's answer and its candidates.
    /// - Returns: The monitor's candidates the page has not had yet (gathered once the answer is set, waited for
    ///   until the end of candidates or ``answerGatheringTimeout``), or why the answer was refused.
    func answerLive(_ sessionId: String, sdp: String, candidates: [IceCandidateMessage.Candidate]) async
        -> Result<[IceCandidateMessage.Candidate], LiveRefusal>
    {
        guard let view = live[sessionId] else {
            return .failure(LiveRefusal("no live view \(sessionId.prefix(64)); start one"))
        }
        do {
            try await view.peer.setRemoteDescription(sdp: sdp)
            for candidate in candidates { try await view.peer.addRemoteCandidate(candidate) }
            try await view.peer.addRemoteCandidate(.init(candidate: "", sdpMid: nil, sdpMLineIndex: nil))
        } catch {
            await endLive(sessionId)
            return .failure(LiveRefusal("the page's answer was refused: \(error)"))
        }
        let deadline = ContinuousClock.now + Self.answerGatheringTimeout
        while let view = live[sessionId], !view.gathered, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        guard var current = live[sessionId] else { return .success([]) }
        let fresh = Array(current.candidates.dropFirst(current.sent))
        current.sent = current.candidates.count
        live[sessionId] = current
        return .success(fresh)
    }

    /// Ends a live view (the page closed it, or another took its place).
    func endLive(_ sessionId: String) async {
        guard let view = live[sessionId] else { return }
        await view.peer.stop()
        liveEnded(sessionId)
    }

    /// Ends every live view (no page is open any more, or the app stops).
    func endAllLive() async {
        for sessionId in liveOrder { await endLive(sessionId) }
    }

    /// The live views for the state: `[{sessionId, flowing}]`.
    var liveState: JSONValue {
        .array(liveOrder.map { ["sessionId": .string($0), "flowing": .bool(live[$0]?.flowing ?? false)] })
    }
}

/// Why a live view cannot start or go on, in words.
struct LiveRefusal: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
