import Foundation
import GStreamer
import Synchronization
import VideoCapture

/// The video half of a peer: an `audio_video` sender's camera (or test pattern) → encoder → payloader branch (with
/// the weak-link downscale), and a receiver's depayloader → decoder → display (or counting sink).
extension WebRTCPipeline {
    /// The elements an `audio_video` sender needs for its video from `source`, encoded with `codec`.
    static func videoSenderElements(
        for source: SenderVideo,
        codec: GStreamerMediaEngine.VideoCodec = .automatic
    ) -> [String] {
        let tail = ["videoconvert", "videoscale", "capsfilter", "queue"] + codec.resolved.senderElements
        switch source {
        case .source(.test): return ["videotestsrc"] + tail
        case .source(.v4l2): return ["v4l2src", "videorate"] + tail
        case .feed: return ["intervideosrc", "videorate"] + tail
        }
    }

    /// The codec of an incoming video pad, if this receiver can decode it (its elements are installed; without them
    /// the video is dropped undecoded).
    static func decodableVideoCodec(of pad: Pad) -> GStreamerMediaEngine.VideoCodec? {
        guard isCaps(of: pad, prefix: "video/"), let name = rtpEncoding(of: pad),
            let codec = GStreamerMediaEngine.VideoCodec(encodingName: name),
            (codec.receiverElements + ["fakesink"]).allSatisfy(GStreamer.hasElement)
        else { return nil }
        return codec
    }

    /// Whether decoded video should be shown: only when playing and a display exists.
    static var hasDisplay: Bool {
        let environment = ProcessInfo.processInfo.environment
        return !(environment["DISPLAY"] ?? "").isEmpty || !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty
    }

    /// The raw video the encoder gets (the `video-raw-caps` capsfilter; changed live by the weak-link downscale).
    static func rawVideoCaps(_ format: GStreamerMediaEngine.VideoFormat) -> String {
        "video/x-raw,format=I420,width=\(max(16, format.width)),height=\(max(16, format.height)),"
            + "framerate=\(max(1, format.framesPerSecond))/1,pixel-aspect-ratio=1/1"
    }

    /// An `audio_video` sender's video: `<source> ! videoconvert ! videoscale ! video/x-raw,width,height,framerate
    /// ! queue (leaky) ! <encoder> ! <payloader> ! application/x-rtp,… ! webrtcbin`, where the encoder and payloader
    /// are `x264enc ! video/x-h264,profile=constrained-baseline ! rtph264pay` (payload type 102) or `vp8enc !
    /// rtpvp8pay` (96), after ``Configuration/videoCodec``.
    static func buildVideoBranch(
        _ source: SenderVideo,
        configuration: GStreamerMediaEngine.Configuration,
        into pipeline: Pipeline,
        webrtc: WebRTCBin
    ) throws(MediaError) {
        var chain: [Element] = []
        switch source {
        case .source(.test):
            let element = try make("videotestsrc", "video-source", in: pipeline)
            element.set("is-live", true)
            element.set("pattern", parsing: "ball")
            chain.append(element)
        case .feed(let feed):
            // The capture's frames at the camera's own rate (black after 1 s without any: never a frozen picture
            // shown as live), brought to the configured rate.
            let element = try make("intervideosrc", "video-source", in: pipeline)
            element.set("channel", feed.channel)
            chain += [element, try make("videorate", "video-rate", in: pipeline)]
        case .source(.v4l2(let device)):
            let element = try make("v4l2src", "video-source", in: pipeline)
            if let device { element.set("device", device) }
            // Cameras offer fixed rates: drop or duplicate frames to the configured one.
            let rate = try make("videorate", "video-rate", in: pipeline)
            rate.set("drop-only", parsing: "true")
            chain += [element, rate]
        }
        let convert = try make("videoconvert", "video-convert", in: pipeline)
        let scale = try make("videoscale", "video-scale", in: pipeline)
        let rawCaps = try make("capsfilter", "video-raw-caps", in: pipeline)
        rawCaps.set("caps", parsing: rawVideoCaps(configuration.videoFormat))
        // Like the audio: no backlog of raw frames while ICE/DTLS come up, and frames are dropped (before
        // encoding, so the encoded stream stays valid) when the encoder falls behind.
        let fresh = try make("queue", "fresh-video", in: pipeline)
        fresh.set("leaky", parsing: "downstream")
        fresh.set("max-size-buffers", parsing: "2")
        fresh.set("max-size-time", parsing: "0")
        fresh.set("max-size-bytes", parsing: "0")
        chain += [convert, scale, rawCaps, fresh]
        let codec = configuration.videoCodec.resolved
        switch codec {
        case .h264:
            chain += try makeH264Encoder(configuration: configuration, in: pipeline)
        default:
            chain += try makeVP8Encoder(configuration: configuration, in: pipeline)
        }
        let rtpCaps = try make("capsfilter", "video-rtp-caps", in: pipeline)
        // rtcp-fb fields become a=rtcp-fb lines: a receiver's PLI/FIR makes webrtcbin ask the encoder for a keyframe.
        // Other fields that are not RTP parameters become the a=fmtp line.
        var caps =
            "application/x-rtp,media=video,encoding-name=\(codec.encodingName),clock-rate=90000,"
            + "payload=\(codec.payloadType),rtcp-fb-nack-pli=(boolean)true,rtcp-fb-ccm-fir=(boolean)true"
        if codec == .h264 {
            // Non-interleaved mode (FU-A, STAP-A), which browsers and aiortc require, and constrained baseline:
            // rtph264pay sets no profile-level-id for a byte-stream, and webrtcbin copies these into a=fmtp.
            let profileLevel = GStreamerMediaEngine.VideoCodec.h264ProfileLevelId(for: configuration.videoFormat)
            caps += ",packetization-mode=(string)1,profile-level-id=(string)\(profileLevel)"
        }
        rtpCaps.set("caps", parsing: caps)
        chain.append(rtpCaps)
        try link(chain, in: pipeline)
        try linkSendOnly(rtpCaps, to: webrtc, what: "the \(codec.encodingName) payloader")
    }

    /// `vp8enc` (realtime, cpu-used 8, error-resilient, keyframe every 2 s, CBR) `! rtpvp8pay pt=96`.
    private static func makeVP8Encoder(
        configuration: GStreamerMediaEngine.Configuration,
        in pipeline: Pipeline
    ) throws(MediaError) -> [Element] {
        let fps = max(1, configuration.videoFormat.framesPerSecond)
        let encoder = try make("vp8enc", "video-encoder", in: pipeline)
        encoder.set("deadline", parsing: "1")
        encoder.set("cpu-used", parsing: "8")
        encoder.set("error-resilient", parsing: "default")
        encoder.set("keyframe-max-dist", parsing: "\(2 * fps)")
        setVideoBitrate(configuration.videoBitrate, on: encoder, codec: .vp8)
        encoder.set("end-usage", parsing: "cbr")
        encoder.set("lag-in-frames", parsing: "0")
        encoder.set("threads", parsing: "2")
        let payloader = try make("rtpvp8pay", "video-payloader", in: pipeline)
        payloader.set("pt", UInt32(vp8PayloadType))
        payloader.set("picture-id-mode", parsing: "15-bit")
        return [encoder, payloader]
    }

    /// `x264enc` (zerolatency, ultrafast, no B-frames, keyframe every 2 s, CBR) `!
    /// video/x-h264,profile=constrained-baseline,stream-format=byte-stream ! rtph264pay pt=102`.
    private static func makeH264Encoder(
        configuration: GStreamerMediaEngine.Configuration,
        in pipeline: Pipeline
    ) throws(MediaError) -> [Element] {
        let fps = max(1, configuration.videoFormat.framesPerSecond)
        let encoder = try make("x264enc", "video-encoder", in: pipeline)
        // zerolatency: no lookahead, no frame threads (sliced threads instead), so a frame leaves as it is encoded.
        encoder.set("tune", parsing: "zerolatency")
        encoder.set("speed-preset", parsing: "ultrafast")
        encoder.set("bframes", parsing: "0")
        encoder.set("b-adapt", parsing: "false")
        encoder.set("key-int-max", parsing: "\(2 * fps)")
        encoder.set("pass", parsing: "cbr")
        setVideoBitrate(configuration.videoBitrate, on: encoder, codec: .h264)
        let profile = try make("capsfilter", "video-h264-caps", in: pipeline)
        // byte-stream: x264 repeats SPS and PPS in front of every IDR frame, so a receiver that joins late or lost
        // them decodes from the next keyframe (rtph264pay's config-interval=-1 would insert them again, which
        // openh264dec fails to decode after rtph264depay).
        profile.set(
            "caps", parsing: "video/x-h264,profile=constrained-baseline,stream-format=byte-stream,alignment=au"
        )
        let payloader = try make("rtph264pay", "video-payloader", in: pipeline)
        payloader.set("pt", UInt32(h264PayloadType))
        payloader.set("config-interval", parsing: "0")
        // SPS+PPS+IDR go out in one STAP-A with the first slice's packet, without waiting for the next frame.
        if payloader.hasProperty("aggregate-mode") {
            payloader.set("aggregate-mode", parsing: "zero-latency")
        }
        return [encoder, profile, payloader]
    }

    /// Sets the encoder's target bitrate (`bitrate` in kbit/s for x264enc, `target-bitrate` in bit/s for vp8enc);
    /// both encoders take a new one while playing.
    static func setVideoBitrate(
        _ bitsPerSecond: Int,
        on encoder: Element,
        codec: GStreamerMediaEngine.VideoCodec
    ) {
        let bitrate = max(50_000, bitsPerSecond)
        switch codec.resolved {
        case .h264: encoder.set("bitrate", parsing: "\(bitrate / 1000)")
        default: encoder.set("target-bitrate", parsing: "\(bitrate)")
        }
    }

    /// A receiver's video: `<depayloader> ! [h264parse !] <decoder> ! <videoconvert ! autovideosink | fakesink>`
    /// for the pad's codec (``decodableVideoCodec(of:)``); a probe on the decoder counts the decoded frames
    /// (``Statistics/decodedVideoFrames``).
    func buildVideoOutput(
        _ output: GStreamerMediaEngine.ReceiverOutput,
        codec: GStreamerMediaEngine.VideoCodec,
        from pad: Pad
    ) throws(MediaError) {
        var chain: [Element] = []
        let decoder: Element
        switch codec.resolved {
        case .h264:
            chain.append(try Self.make("rtph264depay", "video-depayloader", in: pipeline))
            chain.append(try Self.make("h264parse", "video-parser", in: pipeline))
            decoder = try Self.make("openh264dec", "video-decoder", in: pipeline)
        default:
            chain.append(try Self.make("rtpvp8depay", "video-depayloader", in: pipeline))
            decoder = try Self.make("vp8dec", "video-decoder", in: pipeline)
        }
        // A decoder that meets a damaged frame asks for a keyframe (webrtcbin sends a PLI); at most once a second:
        // webrtcbin's RTP session sends each PLI as an early RTCP packet and postpones its regular receiver report
        // after every one (rtpsession.c), so a PLI per lost packet (rtph264depay request-keyframe) would starve the
        // sender of the reports it needs to see the loss. The sender sends a keyframe every 2 s anyway.
        if decoder.hasProperty("min-force-key-unit-interval") {
            decoder.set("min-force-key-unit-interval", parsing: "1000000000")
        }
        chain.append(decoder)
        if case .pictures(let handler) = output {
            chain += try pictureOutput(handler)
        } else if output == .play, Self.hasDisplay, GStreamer.hasElement("autovideosink"),
            GStreamer.hasElement("videoconvert")
        {
            chain.append(try Self.make("videoconvert", "video-convert", in: pipeline))
            chain.append(try Self.make("autovideosink", "video-output", in: pipeline))
        } else {
            let sink = try Self.make("fakesink", "video-output", in: pipeline)
            sink.set("async", false)
            sink.set("sync", false)
            chain.append(sink)
        }
        try Self.link(chain, in: pipeline)
        if let decoded = decoder.staticPad("src") {
            decoded.addProbe(.buffers) { [statistics] _ in
                statistics.decodedVideoFrames.add(1, ordering: .relaxed)
                return .pass
            }
            if let observer = configuration.videoObserver {
                // The decoder's output sizes (caps events) and frames, for the tests' observer.
                decoded.addProbe(.buffersAndDownstreamEvents) { data in
                    if data.isBuffer {
                        observer.decodedFrame()
                    } else if let width = data.capsInt("width"), let height = data.capsInt("height") {
                        observer.decodedSize(width: width, height: height)
                    }
                    return .pass
                }
            }
        }
        if configuration.simulatedIncomingVideoLoss > 0 {
            dropIncomingVideo(share: configuration.simulatedIncomingVideoLoss, payloadType: pad.capsInt("payload"))
        }
        for element in chain.reversed() { element.syncStateWithParent() }
        guard let head = chain[0].staticPad("sink") else {
            throw MediaError(code: .pipelineFailed, message: "the \(codec.encodingName) depayloader has no sink pad")
        }
        guard pad.link(to: head) else {
            throw MediaError(
                code: .pipelineFailed,
                message: "GStreamer could not link webrtcbin to the \(codec.encodingName) decoder"
            )
        }
    }

    /// `videoconvert ! videorate max-rate=2 ! jpegenc ! appsink`: the decoded video as JPEG pictures for `handler`.
    private func pictureOutput(
        _ handler: GStreamerMediaEngine.DecodedPictureHandler
    ) throws(MediaError) -> [Element] {
        let convert = try Self.make("videoconvert", "picture-convert", in: pipeline)
        let rate = try Self.make("videorate", "picture-rate", in: pipeline)
        rate.set("max-rate", parsing: "2")
        let encoder = try Self.make("jpegenc", "picture-encoder", in: pipeline)
        encoder.set("quality", parsing: "85")
        let sink = try Self.make("appsink", "video-output", in: pipeline)
        sink.set("async", false)
        let sessionId = sessionId
        sink.configureAppSink(caps: nil, sync: false) { sample in
            if let jpeg = sample.bytes(), let size = sample.videoSize {
                handler.handle(
                    .init(sessionId: sessionId, jpeg: jpeg, width: size.width, height: size.height))
            }
            return .ok
        }
        return [convert, rate, encoder, sink]
    }

    static func rtpEncoding(of pad: Pad) -> String? {
        pad.capsString("encoding-name")?.uppercased()
    }
}

// MARK: - Payload types

extension WebRTCPipeline {
    /// H.264's RTP payload type (Opus is 111, VP8 96).
    static let h264PayloadType = 102
}

// MARK: - Weak link: receiver reports → 480p and back (senders)

extension WebRTCPipeline {
    /// A sender's weak-link bookkeeping, kept in ``State/videoLink``.
    struct VideoLinkPolling: Sendable {
        /// Decides from the receiver's reports.
        var adaptation = VideoLinkAdaptation()
        /// The receiver's RTCP reports on the video, heard by a probe installed at the first poll.
        let reports = VideoReceiverReports()
        /// When the reports were first listened to: the adaptation's time line starts there.
        var start: ContinuousClock.Instant?
        /// When the statistics were last requested.
        var lastRequest: ContinuousClock.Instant?
        /// Whether a statistics request is under way (its reply has not come yet).
        var requesting = false
        /// A change decided on webrtcbin's thread, applied on the peer's thread.
        var pending: VideoLinkAdaptation.Action?

        init() {}
    }

    /// How often a sender judges the link (and asks webrtcbin for the round trip).
    static let videoLinkPollInterval = Duration.seconds(1)

    /// Called on the peer's thread each time round its bus loop (at least every 250 ms): applies a decided change of
    /// format and, once connected, judges the link once a second from the receiver's reports since the previous
    /// time. Nothing for receivers and audio-only senders.
    func pollVideoLink() {
        guard case .sender(_, video: _?) = role else { return }
        let now = ContinuousClock.now
        let (pending, due, first) = state.withLock { state -> (VideoLinkAdaptation.Action?, Bool, Bool) in
            let pending = state.videoLink.pending
            state.videoLink.pending = nil
            guard state.signaling.isFlowing, !state.signaling.hasEnded, !state.videoLink.requesting,
                state.videoLink.lastRequest.map({ now - $0 >= Self.videoLinkPollInterval }) ?? true
            else { return (pending, false, false) }
            state.videoLink.lastRequest = now
            state.videoLink.requesting = true
            return (pending, true, state.videoLink.start == nil)
        }
        if let pending { applyVideoLink(pending) }
        guard due else { return }
        if first, !listenToReceiverReports() {
            // The video has not flowed yet (no SSRC in its caps): try again at the next poll.
            state.withLock { $0.videoLink.requesting = false }
            return
        }
        requestRoundTrip(at: now)
    }

    /// Learns the video's SSRC and installs the RTCP probe on webrtcbin's DTLS-SRTP decoders (one with
    /// max-bundle): false if the video has no SSRC yet.
    private func listenToReceiverReports() -> Bool {
        guard let ssrc = videoSinkPad()?.currentCapsUInt("ssrc") else { return false }
        let (reports, decoders) = state.withLock { state in
            state.videoLink.start = .now
            return (state.videoLink.reports, state.dtlsDecoders)
        }
        configuration.videoObserver?.sent(configuration.videoFormat)
        reports.listen(to: ssrc)
        for decoder in decoders {
            // Each decrypted incoming RTCP packet.
            decoder.element.staticPad("rtcp_src")?.addProbe(.buffers) { data in
                if let packet = data.bufferBytes() { reports.receive(packet) }
                return .pass
            }
        }
        return true
    }

    /// Emits webrtcbin's `get-stats` for the video's sink pad; with the reply (the round trip), the reports heard
    /// since the previous poll go to the adaptation.
    private func requestRoundTrip(at time: ContinuousClock.Instant) {
        guard let pad = videoSinkPad() else {
            state.withLock { $0.videoLink.requesting = false }
            return
        }
        webrtc.requestStatistics(for: pad) { [self] entries in
            let roundTrip = entries.flatMap(Self.roundTrip(in:))
            state.withLock { state in
                state.videoLink.requesting = false
                let report = VideoLinkAdaptation.Report(
                    fractionLost: state.videoLink.reports.take(), roundTrip: roundTrip
                )
                guard let start = state.videoLink.start,
                    let action = state.videoLink.adaptation.observe(report, at: time - start)
                else { return }
                state.videoLink.pending = action
            }
        }
    }

    /// Switches the raw video (the `video-raw-caps` capsfilter, which videoscale follows) and the encoder's bitrate.
    /// Both encoders restart on new caps with a keyframe (H.264 with new SPS/PPS in front of it).
    private func applyVideoLink(_ action: VideoLinkAdaptation.Action) {
        let configured = configuration.videoFormat
        let format = action == .reduce ? VideoLinkAdaptation.reducedFormat(of: configured) : configured
        let bitrate =
            action == .reduce
            ? VideoLinkAdaptation.reducedBitrate(of: configuration.videoBitrate) : configuration.videoBitrate
        pipeline.element(named: "video-raw-caps")?.set("caps", parsing: Self.rawVideoCaps(format))
        if let encoder = pipeline.element(named: "video-encoder") {
            Self.setVideoBitrate(bitrate, on: encoder, codec: configuration.videoCodec)
        }
        configuration.videoObserver?.sent(format)
    }

    /// webrtcbin's sink pad the video payloader feeds, if any.
    private func videoSinkPad() -> Pad? {
        pipeline.element(named: "video-rtp-caps")?.staticPad("src")?.peer
    }

    /// The longest `round-trip-time` (seconds) of the `remote-inbound-rtp` entries of webrtcbin's statistics. With
    /// max-bundle every stream shares the path, and webrtcbin 1.22 may show the video's report block under the audio
    /// (see ``VideoReceiverReports``), so any of them will do; nil before the first receiver report.
    static func roundTrip(in entries: [WebRTCBin.StatisticsEntry]) -> Duration? {
        let seconds = entries.filter { $0.type == "remote-inbound-rtp" }.compactMap { $0.numbers["round-trip-time"] }
            .filter { $0 > 0 }
        return seconds.max().map { .microseconds(Int64($0 * 1_000_000)) }
    }
}

// MARK: - Simulated loss (receivers, tests only)

extension WebRTCPipeline {
    /// Test-only (``GStreamerMediaEngine/Configuration/simulatedIncomingVideoLoss``): drops a share of the incoming
    /// video RTP packets where webrtcbin's DTLS-SRTP decoder hands them on, before the RTP session and jitter
    /// buffer, so the receiver reports the loss to the sender in its RTCP receiver reports as a real link would.
    private func dropIncomingVideo(share: Double, payloadType: Int?) {
        guard let payloadType, let decoder = state.withLock({ $0.dtlsDecoders.first }),
            let pad = decoder.element.staticPad("rtp_src")
        else { return }
        let loss = SimulatedLoss(share: share, payloadType: payloadType)
        pad.addProbe(.buffers) { data in
            guard let header = data.bufferPrefix(2), header.count == 2, Int(header[1] & 0x7f) == loss.payloadType,
                loss.dropNext()
            else { return .pass }
            return .drop
        }
    }

    /// Which packets of one payload type (the video's) a probe drops: evenly spread, `share` of them.
    final class SimulatedLoss: Sendable {
        let share: Double
        let payloadType: Int
        private let seen = Atomic<Int>(0)

        init(share: Double, payloadType: Int) {
            self.share = min(1, max(0, share))
            self.payloadType = payloadType
        }

        /// Whether to drop the next packet of the payload type.
        func dropNext() -> Bool {
            let count = seen.add(1, ordering: .relaxed).newValue
            return (Double(count) * share).rounded(.down) > (Double(count - 1) * share).rounded(.down)
        }
    }
}
