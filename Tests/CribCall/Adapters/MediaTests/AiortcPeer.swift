import CribCallProtocol
import Foundation
import StreamMedia
import TestSupport
import Testing

@testable import Media

/// `Tests/Interop/webrtc/aiortc_peer.py`: aiortc (an independent WebRTC stack) answering one of our senders, with
/// signaling as JSON lines on its stdin/stdout.
///
/// The peer's start-up (importing aiortc and PyAV has taken 20 s on a loaded 2-core machine) is not part of any
/// deadline: the sender is created only after the peer's `ready` line, and `timeout` counts from there.
enum AiortcPeer {
    /// What a run reported.
    struct Run {
        /// aiortc's result line (decoded audio and video, what the offer and answer negotiated).
        var result: [String: Any]
        /// The sender's events, up to its end.
        var events: [MediaEvent]
        /// The sender's offer.
        var offer: String
        /// Video frames the sender encoded (-1 for a sender without video).
        var encodedFrames: Int
        /// From aiortc's ready line to the sender's `.flowing`.
        var flowingAfter: Duration?
        /// aiortc's log (stderr).
        var log: String
    }

    /// Streams from a new sender of `engine` to aiortc until aiortc prints its result, then stops the sender and
    /// checks that it ended and released its pipeline.
    /// - Parameters:
    ///   - mediaType: `.audio`, or `.audioVideo` (pass `--video` and its options in `arguments`).
    ///   - arguments: aiortc_peer.py's options (`--seconds`, `--timeout`, `--video-frames`, …).
    ///   - timeout: How long after aiortc is ready the test waits for its result; longer than its `--timeout`.
    /// - Returns: nil when the Python venv is missing outside `make test` (a loud warning says so).
    static func answer(
        _ engine: GStreamerMediaEngine,
        sessionId: String,
        mediaType: MediaType,
        arguments: [String],
        timeout: Duration
    ) async throws -> Run? {
        guard InteropPeers.pythonAvailable(for: "Media aiortc interop"), let python = InteropPeers.python else {
            return nil
        }
        let script = Fixtures.repositoryRoot.appendingPathComponent("Tests/Interop/webrtc/aiortc_peer.py").path
        let aiortc = try BackgroundProcess(python, [script] + arguments, acceptsInput: true)
        do {
            try await aiortc.ready("aiortc_peer.py") { $0.contains(#""type": "ready""#) }
        } catch {
            await aiortc.stop()
            throw error
        }
        let started = ContinuousClock.now
        let sender = try await engine.makeSender(sessionId: sessionId, mediaType: mediaType)
        let recorder = EventRecorder(sender) { event in
            switch event {
            case .localDescription(let sdp):
                aiortc.send(json(["type": "offer", "sdp": sdp]))
            case .localCandidate(let candidate):
                aiortc.send(
                    json([
                        "type": "candidate", "candidate": candidate.candidate, "sdpMid": candidate.sdpMid ?? "",
                        "sdpMLineIndex": candidate.sdpMLineIndex ?? 0,
                    ]))
            default:
                break
            }
        }

        // aiortc's answer and candidates go back to the sender until its result line arrives.
        var handled = 0
        var result: [String: Any]?
        let deadline = started + timeout
        while result == nil, ContinuousClock.now < deadline, aiortc.status == nil || handled < aiortc.output.count {
            let lines = aiortc.output
            for line in lines[handled...] {
                guard let message = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                    continue
                }
                switch message["type"] as? String {
                case "answer":
                    try await sender.setRemoteDescription(sdp: try #require(message["sdp"] as? String))
                case "candidate":
                    try await sender.addRemoteCandidate(
                        .init(
                            candidate: message["candidate"] as? String ?? "",
                            sdpMid: message["sdpMid"] as? String,
                            sdpMLineIndex: message["sdpMLineIndex"] as? Int
                        )
                    )
                case "result":
                    result = message
                default:
                    break
                }
            }
            handled = lines.count
            try await Task.sleep(for: .milliseconds(20))
        }
        let flowingAfter = recorder.firstFlowing.map { $0 - started }
        let encoded = (sender as? GStreamerMediaPeer)?.encodedVideoFrames ?? -1
        await sender.stop()
        await aiortc.stop()
        // Stopped: ended, and every GStreamer object released.
        #expect(await recorder.finished(), "the sender did not end after stop()")
        #expect(await MediaTestSupport.released(sender), "the sender's pipeline was not released")
        let finalResult = try #require(
            result,
            "aiortc printed no result within \(timeout) of its ready line; its log:\n\(aiortc.errorOutput)"
        )
        let offer = try #require(recorder.events.first?.localDescription, "the first event must be the offer")
        return Run(
            result: finalResult, events: recorder.events, offer: offer, encodedFrames: encoded,
            flowingAfter: flowingAfter, log: aiortc.errorOutput
        )
    }

    /// One JSON line for aiortc's stdin.
    static func json(_ object: [String: Any]) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: object)) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self) + "\n"
    }
}
