import AudioCapture
import CribCallProtocol
import DeviceIdentity
import Foundation
import SoundDetection
import StreamMedia
import Synchronization
import TestSupport
import Testing
import VideoCapture

@testable import Media

/// `audio_video` streams: a second m-line with H.264 (payload type 102) or VP8 (96) after the Opus one. Small video
/// (320x240 at 15 fps) so two pipelines and aiortc fit on two cores; the weak-link tests send 1280x720 at 10 fps.
@Suite(.serialized, .heavy("H.264/VP8 encoders and decoders in real time, aiortc"))
struct VideoStreamTests {
    static let smallVideo = GStreamerMediaEngine.VideoFormat(width: 320, height: 240, framesPerSecond: 15)
    static let hdVideo = GStreamerMediaEngine.VideoFormat(width: 1280, height: 720, framesPerSecond: 10)

    static func monitorEngine(
        _ videoSource: GStreamerMediaEngine.VideoSource? = nil,
        codec: GStreamerMediaEngine.VideoCodec = .automatic,
        format: GStreamerMediaEngine.VideoFormat = smallVideo,
        observer: VideoObserver? = nil
    ) throws -> GStreamerMediaEngine {
        var configuration = GStreamerMediaEngine.Configuration(
            dtlsCertificate: try MediaTestSupport.certificate(), audioSource: .test(.cry),
            iceAddresses: ["127.0.0.1"], videoSource: videoSource, videoFormat: format, videoBitrate: 300_000
        )
        configuration.videoCodec = codec
        configuration.videoObserver = observer
        return try GStreamerMediaEngine(configuration: configuration)
    }

    static func listenerEngine(videoLoss: Double = 0, observer: VideoObserver? = nil) throws -> GStreamerMediaEngine {
        var configuration = GStreamerMediaEngine.Configuration(
            dtlsCertificate: try MediaTestSupport.certificate(), iceAddresses: ["127.0.0.1"], receiverOutput: .discard
        )
        configuration.simulatedIncomingVideoLoss = videoLoss
        configuration.videoObserver = observer
        return try GStreamerMediaEngine(configuration: configuration)
    }

    /// The m-lines of an SDP, in order ("audio", "video", …).
    static func mediaKinds(_ sdp: String) -> [String] {
        sdp.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("m=") }
            .map { String($0.dropFirst(2).prefix { $0 != " " }) }
    }

    /// The lines of an SDP's video section.
    static func videoSection(_ sdp: String) -> [String] {
        let lines = sdp.split(whereSeparator: \.isNewline).map(String.init)
        return Array(lines.drop { !$0.hasPrefix("m=video ") }.prefix { !$0.hasPrefix("m=audio ") })
    }

    @Test(
        "an audio_video sender offers Opus then the video codec, and aiortc decodes ≥ 10 frames and ≥ 2 s of audio",
        arguments: [GStreamerMediaEngine.VideoCodec.h264, .vp8]
    )
    func aiortcDecodesVideoAndAudio(codec: GStreamerMediaEngine.VideoCodec) async throws {
        let engine = try Self.monitorEngine(codec: codec)
        guard
            let run = try await AiortcPeer.answer(
                engine, sessionId: "video-aiortc", mediaType: .audioVideo,
                arguments: ["--video", "--seconds", "2.5", "--timeout", "30", "--video-frames", "10"],
                timeout: .seconds(35)
            )
        else { return }

        #expect(Self.mediaKinds(run.offer) == ["audio", "video"], "offer:\n\(run.offer)")
        let video = Self.videoSection(run.offer)
        let payload = codec == .h264 ? 102 : 96
        // Port 0 with a=bundle-only: max-bundle (JSEP) puts the video on the audio's transport.
        #expect(video.first?.hasSuffix(" UDP/TLS/RTP/SAVPF \(payload)") == true, "video m-line: \(video.first ?? "")")
        #expect(video.contains("a=sendonly"))
        #expect(video.contains("a=rtcp-fb:\(payload) nack pli"))
        #expect(video.contains("a=rtcp-fb:\(payload) ccm fir"))
        #expect(run.offer.contains("a=group:BUNDLE"), "max-bundle: one transport")
        let answerRtpmap = try #require(run.result["answer_rtpmap"] as? [String])
        #expect(answerRtpmap.contains { $0.lowercased().contains("opus/48000") }, "answer: \(answerRtpmap)")
        switch codec {
        case .h264:
            #expect(video.contains("a=rtpmap:102 H264/90000"), "\(video)")
            // aiortc (like Chromium) only accepts H.264 in packetization mode 1, constrained baseline.
            let fmtp = try #require(video.first { $0.hasPrefix("a=fmtp:102 ") }, "\(video)")
            #expect(fmtp.contains("packetization-mode=1"), "\(fmtp)")
            #expect(fmtp.contains("profile-level-id=42e01f"), "\(fmtp)")
            #expect(answerRtpmap.contains { $0.lowercased().contains("h264/90000") }, "answer: \(answerRtpmap)")
        default:
            #expect(video.contains("a=rtpmap:96 VP8/90000"), "\(video)")
            #expect(answerRtpmap.contains { $0.lowercased().contains("vp8/90000") }, "answer: \(answerRtpmap)")
        }

        #expect(run.result["error"] == nil, "aiortc: \(run.result["error"] ?? "")\n\(run.log)")
        let videoFrames = run.result["video_frames"] as? Int ?? 0
        #expect(videoFrames >= 10, "aiortc decoded \(videoFrames) video frames")
        #expect(run.result["video_sizes"] as? [String] == ["320x240"])
        #expect((run.result["seconds"] as? Double ?? 0) >= 2.0)
        #expect((run.result["samples"] as? Int ?? 0) >= 2 * 48_000)
        #expect(run.encodedFrames >= videoFrames, "the sender encoded \(run.encodedFrames) frames")
        print(
            "aiortc \(codec) video interop: \(videoFrames) frames (first at "
                + "\(run.result["first_video_frame_ms"] ?? "?") ms), sender encoded \(run.encodedFrames)")
    }

    @Test("on a weak link (20 % video loss) the sender drops to 854x480, aiortc keeps decoding, then 720p returns")
    func weakLinkDownscalesTo480p() async throws {
        let sent = VideoObserver()
        let engine = try Self.monitorEngine(codec: .h264, format: Self.hdVideo, observer: sent)
        let reduced = VideoLinkAdaptation.reducedFormat(of: Self.hdVideo)
        #expect(reduced == .init(width: 854, height: 480, framesPerSecond: 10))
        // A good link for 10 frames (720p), then 20 % loss until 10 frames at 480p have been decoded (about 3–4 s of
        // loss before the switch down), then a good link until 10 frames at 720p (10 s before the switch back).
        guard
            let run = try await AiortcPeer.answer(
                engine, sessionId: "video-weak-link", mediaType: .audioVideo,
                arguments: [
                    "--video", "--seconds", "1", "--timeout", "60", "--video-frames", "10",
                    "--drop-video", "0.2", "--drop-after", "10", "--until-size", "854x480", "--then-size", "1280x720",
                ],
                timeout: .seconds(65)
            )
        else { return }

        #expect(run.result["error"] == nil, "aiortc: \(run.result["error"] ?? "")\n\(run.log)")
        let changes = (run.result["video_size_changes"] as? [[String: Any]] ?? []).compactMap { $0["size"] as? String }
        #expect(changes == ["1280x720", "854x480", "1280x720"], "sizes in order: \(changes)\n\(run.log)")
        #expect(sent.sentSizes.map(\.description) == changes, "the sender sent \(sent.sentSizes)")
        let atSize = run.result["video_frames_at_size"] as? [String: Int] ?? [:]
        // Frames keep decoding through the loss: 10 at 480p (in a row) while the loss went on.
        #expect((atSize["854x480"] ?? 0) >= 10, "frames per size since the loss started: \(atSize)")
        #expect((run.result["loss_stopped_at_frame"] as? Int) != nil, "the loss never stopped:\n\(run.log)")
        #expect((run.result["dropped_video_packets"] as? Int ?? 0) > 0)
        print(
            "weak link: sizes \(changes), frames per size \(atSize), "
                + "\(run.result["dropped_video_packets"] ?? 0) packets dropped")
    }

    @Test(
        "a Swift receiver answers an audio_video offer and decodes ≥ 10 frames besides the audio",
        arguments: [GStreamerMediaEngine.VideoCodec.h264, .vp8]
    )
    func swiftReceiverDecodesVideo(codec: GStreamerMediaEngine.VideoCodec) async throws {
        let monitor = try Self.monitorEngine(.test, codec: codec)
        let listener = try Self.listenerEngine()
        let (sender, receiver, senderEvents, receiverEvents) = try await Self.connect(monitor, listener, "video-s2s")
        let started = ContinuousClock.now
        #expect(await receiverEvents.first(where: \.isFlowing) != nil, "no audio: \(receiverEvents.events)")
        let peer = try #require(receiver as? GStreamerMediaPeer)
        let frames = await Self.decodedFrames(peer, atLeast: 10, within: .seconds(15))
        let tenFramesAfter = ContinuousClock.now - started
        #expect(frames >= 10, "the receiver decoded \(frames) video frames")
        let offer = try #require(senderEvents.events.first?.localDescription)
        #expect(Self.mediaKinds(offer) == ["audio", "video"])
        #expect(offer.contains(codec == .h264 ? "a=rtpmap:102 H264/90000" : "a=rtpmap:96 VP8/90000"), "\(offer)")
        let answer = try #require(receiverEvents.events.first?.localDescription)
        #expect(Self.mediaKinds(answer) == ["audio", "video"], "answer:\n\(answer)")
        await receiver.stop()
        await sender.stop()
        #expect(await MediaTestSupport.released(receiver))
        #expect(await MediaTestSupport.released(sender))
        print("Swift↔Swift \(codec) video: \(frames) frames decoded, 10 after \(tenFramesAfter)")
    }

    @Test("a Swift receiver losing 10 % of the H.264 packets makes the sender drop to 854x480 and keeps decoding")
    func swiftReceiverOnAWeakLink() async throws {
        let sent = VideoObserver()
        let decoded = VideoObserver()
        let monitor = try Self.monitorEngine(.test, codec: .h264, format: Self.hdVideo, observer: sent)
        // 10 %, twice the threshold: openh264dec drops every damaged frame until the next keyframe, so at 20 % it
        // decodes only a frame or two a second.
        let listener = try Self.listenerEngine(videoLoss: 0.1, observer: decoded)
        // The sender's recorder forwards its offer and candidates: it must live as long as the stream.
        let (sender, receiver, senderEvents, receiverEvents) = try await Self.connect(monitor, listener, "video-lossy")
        #expect(await receiverEvents.first(where: \.isFlowing) != nil, "no audio: \(receiverEvents.events)")
        let reduced = VideoObserver.Size(width: 854, height: 480)
        // Our receiver reports every 2.5–7.5 s (webrtcbin's RTCP interval): two reports 3 s apart reduce the video.
        let deadline = ContinuousClock.now + .seconds(45)
        while decoded.decodedFrames(at: reduced) < 20, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        let hd = VideoObserver.Size(width: 1280, height: 720)
        #expect(sent.sentSizes == [hd, reduced], "the sender sent \(sent.sentSizes)")
        #expect(decoded.decodedSizes == [hd, reduced], "the receiver decoded \(decoded.decodedSizes)")
        #expect(decoded.decodedFrames(at: reduced) >= 20, "480p frames decoded: \(decoded.decodedFrames(at: reduced))")
        let ended = receiverEvents.events.contains { $0.isEnded }
        #expect(!ended, "the receiver ended: \(receiverEvents.events)")
        await receiver.stop()
        await sender.stop()
        #expect(await senderEvents.finished())
        #expect(await MediaTestSupport.released(receiver))
        #expect(await MediaTestSupport.released(sender))
        print(
            "Swift weak link: sent \(sent.sentSizes), decoded \(decoded.decodedSizes), "
                + "\(decoded.decodedFrames(at: hd)) frames at 720p, \(decoded.decodedFrames(at: reduced)) at 480p")
    }

    @Test("a receiver asked for pictures hands over the video as JPEGs, at most two a second, with its session id")
    func pictures() async throws {
        let pictures = Mutex<[GStreamerMediaEngine.DecodedPicture]>([])
        let handler = GStreamerMediaEngine.DecodedPictureHandler { picture in
            pictures.withLock { $0.append(picture) }
        }
        let listener = try GStreamerMediaEngine(
            configuration: .init(
                dtlsCertificate: try MediaTestSupport.certificate(), iceAddresses: ["127.0.0.1"],
                receiverOutput: .pictures(handler)))
        // The sender's recorder forwards its offer and candidates: it must live as long as the stream.
        let (sender, receiver, senderEvents, receiverEvents) = try await Self.connect(
            try Self.monitorEngine(.test), listener, "video-pictures")
        #expect(await receiverEvents.first(where: \.isFlowing) != nil, "no audio: \(receiverEvents.events)")
        let peer = try #require(receiver as? GStreamerMediaPeer)
        let decoded = await Self.decodedFrames(peer, atLeast: 45, within: .seconds(20))
        let received = pictures.withLock { $0 }
        await receiver.stop()
        await sender.stop()
        #expect(await senderEvents.finished())
        #expect(await MediaTestSupport.released(receiver))
        let first = try #require(received.first, "no picture after \(decoded) decoded frames")
        #expect(first.sessionId == "video-pictures")
        #expect(first.width == 320 && first.height == 240)
        #expect(first.jpeg.starts(with: [0xFF, 0xD8]) && first.jpeg.suffix(2) == [0xFF, 0xD9])
        // 45 frames at 15 fps are 3 s of video: at most 2 pictures a second (and one for the first frame).
        #expect(decoded >= 45 && received.count <= decoded / 15 * 2 + 2, "\(received.count) pictures of \(decoded)")
    }

    @Test("with the safety detectors' camera shared, a stream watches it (one camera open) and the analysis goes on")
    func sharedCamera() async throws {
        let camera = try VideoCapture(source: .test)
        let analysed = Mutex(0)
        let events = camera.events()
        let counting = Task {
            for await event in events { if case .frame = event { analysed.withLock { $0 += 1 } } }
        }
        camera.start()
        defer {
            camera.stop()
            counting.cancel()
        }
        var configuration = GStreamerMediaEngine.Configuration(
            dtlsCertificate: try MediaTestSupport.certificate(), audioSource: .test(.cry),
            iceAddresses: ["127.0.0.1"], videoFormat: Self.smallVideo, videoBitrate: 300_000)
        configuration.videoFeed = camera.liveFeed
        let monitor = try GStreamerMediaEngine(configuration: configuration)
        // The sender's recorder forwards its offer and candidates: it must live as long as the stream.
        let (sender, receiver, senderEvents, receiverEvents) = try await Self.connect(
            monitor, try Self.listenerEngine(), "video-shared")
        #expect(await receiverEvents.first(where: \.isFlowing) != nil, "no audio: \(receiverEvents.events)")
        let senderPeer = try #require(sender as? GStreamerMediaPeer)
        let source = try #require(senderPeer.element(named: "video-source", property: "channel"))
        #expect(source.factory == "intervideosrc" && source.value == camera.liveFeed.channel, "\(source)")
        #expect(camera.liveFeed.viewerCount == 1)
        let before = analysed.withLock { $0 }
        let frames = await Self.decodedFrames(
            try #require(receiver as? GStreamerMediaPeer), atLeast: 10, within: .seconds(15))
        #expect(frames >= 10, "the receiver decoded \(frames) frames of the shared camera")
        // The detectors see about 5 frames a second; a loaded machine may deliver the next one late (it saw none in
        // the second the decoding took under make test-stress), so the check waits up to 15 s for one.
        let deadline = ContinuousClock.now + .seconds(15)
        while analysed.withLock({ $0 }) <= before, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(analysed.withLock { $0 } > before, "the detectors' frames stopped while the stream ran")
        await receiver.stop()
        await sender.stop()
        #expect(await senderEvents.finished())
        #expect(await MediaTestSupport.released(sender))
        #expect(camera.liveFeed.viewerCount == 0, "the stream's end closes the camera's live branch")
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

    // MARK: - Helpers

    /// A sender of `monitor` and a receiver of `listener` signaling to each other directly.
    static func connect(
        _ monitor: GStreamerMediaEngine,
        _ listener: GStreamerMediaEngine,
        _ sessionId: String,
        mediaType: MediaType = .audioVideo
    ) async throws -> (any MediaPeer, any MediaPeer, EventRecorder, EventRecorder) {
        let receiver = try await listener.makeReceiver(sessionId: sessionId, mediaType: mediaType)
        let sender = try await monitor.makeSender(sessionId: sessionId, mediaType: mediaType)
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
        return (sender, receiver, senderEvents, receiverEvents)
    }

    /// Waits (at most `bound`) until the receiver has decoded `count` video frames; returns how many it has.
    static func decodedFrames(_ peer: GStreamerMediaPeer, atLeast count: Int, within bound: Duration) async -> Int {
        let deadline = ContinuousClock.now + bound
        while peer.decodedVideoFrames < count, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(50))
        }
        return peer.decodedVideoFrames
    }
}
