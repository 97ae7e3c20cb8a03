import AudioCapture
import CribCallProtocol
import DeviceIdentity
import Foundation
import SoundDetection
@testable import Media
import StreamMedia
import TestSupport
import Testing

/// `audio_video` streams: a second m-line with VP8 (payload type 96) after the Opus one. Small video (320x240 at
/// 15 fps) so two pipelines and aiortc fit on two cores.
@Suite(.serialized)
struct VideoStreamTests {
    static let smallVideo = GStreamerMediaEngine.VideoFormat(width: 320, height: 240, framesPerSecond: 15)

    static func monitorEngine(_ videoSource: GStreamerMediaEngine.VideoSource? = nil) throws -> GStreamerMediaEngine {
        try GStreamerMediaEngine(
            configuration: .init(
                dtlsCertificate: try MediaTestSupport.certificate(), audioSource: .test(.cry),
                iceAddresses: ["127.0.0.1"], videoSource: videoSource, videoFormat: smallVideo,
                videoBitrate: 300_000
            )
        )
    }

    /// The m-lines of an SDP, in order ("audio", "video", …).
    static func mediaKinds(_ sdp: String) -> [String] {
        sdp.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("m=") }
            .map { String($0.dropFirst(2).prefix { $0 != " " }) }
    }

    @Test("an audio_video sender offers Opus then VP8, and aiortc decodes ≥ 10 video frames and ≥ 2 s of audio")
    func aiortcDecodesVideoAndAudio() async throws {
        guard InteropPeers.pythonAvailable(for: "Media aiortc video interop"), let python = InteropPeers.python else {
            return
        }
        let engine = try Self.monitorEngine()
        let script = Fixtures.repositoryRoot.appendingPathComponent("Tests/Interop/webrtc/aiortc_peer.py").path
        let aiortc = try BackgroundProcess(
            python, [script, "--seconds", "2.5", "--timeout", "30", "--video", "--video-frames", "10"],
            acceptsInput: true
        )
        let sender = try await engine.makeSender(sessionId: "video-aiortc", mediaType: .audioVideo)
        let recorder = EventRecorder(sender) { event in
            switch event {
            case .localDescription(let sdp):
                aiortc.send(LiveStreamTests.json(["type": "offer", "sdp": sdp]))
            case .localCandidate(let candidate):
                aiortc.send(LiveStreamTests.json([
                    "type": "candidate", "candidate": candidate.candidate, "sdpMid": candidate.sdpMid ?? "",
                    "sdpMLineIndex": candidate.sdpMLineIndex ?? 0,
                ]))
            default:
                break
            }
        }
        var handled = 0
        var result: [String: Any]?
        let deadline = ContinuousClock.now + .seconds(35)
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
        let encoded = (sender as? GStreamerMediaPeer)?.encodedVideoFrames ?? -1
        await sender.stop()
        await aiortc.stop()
        let result_ = try #require(result, "aiortc printed no result; its log:\n\(aiortc.errorOutput)")

        let offer = try #require(recorder.events.first?.localDescription, "the first event must be the offer")
        #expect(Self.mediaKinds(offer) == ["audio", "video"], "offer:\n\(offer)")
        let videoSection = try #require(offer.components(separatedBy: "m=video ").dropFirst().first)
        // Port 0 with a=bundle-only: max-bundle (JSEP) puts the video on the audio's transport.
        #expect(videoSection.drop { $0 != " " }.hasPrefix(" UDP/TLS/RTP/SAVPF 96"), "VP8 (96) must be the payload type")
        #expect(videoSection.contains("a=sendonly"))
        #expect(offer.contains("a=rtpmap:96 VP8/90000"))
        #expect(offer.contains("a=group:BUNDLE"), "max-bundle: one transport")
        let answerRtpmap = try #require(result_["answer_rtpmap"] as? [String])
        #expect(answerRtpmap.contains { $0.lowercased().contains("vp8/90000") }, "answer: \(answerRtpmap)")
        #expect(answerRtpmap.contains { $0.lowercased().contains("opus/48000") }, "answer: \(answerRtpmap)")

        #expect(result_["error"] == nil, "aiortc: \(result_["error"] ?? "")\n\(aiortc.errorOutput)")
        let videoFrames = result_["video_frames"] as? Int ?? 0
        #expect(videoFrames >= 10, "aiortc decoded \(videoFrames) video frames")
        #expect(result_["video_sizes"] as? [String] == ["320x240"])
        #expect((result_["seconds"] as? Double ?? 0) >= 2.0)
        #expect((result_["samples"] as? Int ?? 0) >= 2 * 48_000)
        #expect(encoded >= videoFrames, "the sender encoded \(encoded) frames")
        #expect(await recorder.finished())
        #expect(await MediaTestSupport.released(sender))
        print("aiortc video interop: \(videoFrames) frames (first at \(result_["first_video_frame_ms"] ?? "?") ms), "
            + "sender encoded \(encoded)")
    }

    @Test("a Swift receiver answers an audio_video offer and decodes ≥ 10 VP8 frames besides the audio")
    func swiftReceiverDecodesVideo() async throws {
        let monitor = try Self.monitorEngine(.test)
        let listener = try GStreamerMediaEngine(
            configuration: .init(
                dtlsCertificate: try MediaTestSupport.certificate(), iceAddresses: ["127.0.0.1"],
                receiverOutput: .discard
            )
        )
        let receiver = try await listener.makeReceiver(sessionId: "video-s2s", mediaType: .audioVideo)
        let sender = try await monitor.makeSender(sessionId: "video-s2s", mediaType: .audioVideo)
        let receiverEvents = EventRecorder(receiver) { event in
            switch event {
            case .localDescription(let sdp): try? await sender.setRemoteDescription(sdp: sdp)
            case .localCandidate(let candidate): try? await sender.addRemoteCandidate(candidate)
            default: break
            }
        }
        let senderEvents = EventRecorder(sender) { event in
            switch event {
            case .localDescription(let sdp): try? await receiver.setRemoteDescription(sdp: sdp)
            case .localCandidate(let candidate): try? await receiver.addRemoteCandidate(candidate)
            default: break
            }
        }
        let started = ContinuousClock.now
        #expect(await receiverEvents.first(where: \.isFlowing) != nil, "no audio: \(receiverEvents.events)")
        let peer = try #require(receiver as? GStreamerMediaPeer)
        let deadline = ContinuousClock.now + .seconds(15)
        while peer.decodedVideoFrames < 10, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        let tenFramesAfter = ContinuousClock.now - started
        let frames = peer.decodedVideoFrames
        #expect(frames >= 10, "the receiver decoded \(frames) video frames")
        let offer = try #require(senderEvents.events.first?.localDescription)
        #expect(Self.mediaKinds(offer) == ["audio", "video"])
        let answer = try #require(receiverEvents.events.first?.localDescription)
        #expect(Self.mediaKinds(answer) == ["audio", "video"], "answer:\n\(answer)")
        await receiver.stop()
        await sender.stop()
        #expect(await MediaTestSupport.released(receiver))
        #expect(await MediaTestSupport.released(sender))
        print("Swift↔Swift video: \(frames) frames decoded, 10 after \(tenFramesAfter)")
    }

    @Test("an audio sender still offers audio only, and an audio_video one from a missing camera fails clearly")
    func audioOnlyAndMissingCamera() async throws {
        let audioOnly = try await Self.monitorEngine().makeSender(sessionId: "audio-only", mediaType: .audio)
        let recorder = EventRecorder(audioOnly)
        let offer = await recorder.first(where: { $0.localDescription != nil })?.localDescription
        #expect(offer.map(Self.mediaKinds) == ["audio"])
        await audioOnly.stop()
        #expect(await MediaTestSupport.released(audioOnly))

        do {
            _ = try await Self.monitorEngine(.v4l2(device: "/dev/video97"))
                .makeSender(sessionId: "no-camera", mediaType: .audioVideo)
            Issue.record("a sender started on a missing camera")
        } catch let error as MediaError {
            #expect(error.code == .pipelineFailed)
            #expect(error.message.contains("camera"), "\(error.message)")
        }
    }
}
