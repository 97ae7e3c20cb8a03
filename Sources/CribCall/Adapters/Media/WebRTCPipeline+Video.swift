import CGStreamer
import Foundation
import GStreamer
import Synchronization

/// The video half of a peer: an `audio_video` sender's camera (or test pattern) → encoder → payloader branch (with
/// the weak-link downscale), and a receiver's depayloader → decoder → display (or counting sink).
extension WebRTCPipeline {
    /// The elements an `audio_video` sender needs for its video from `source`, encoded with `codec`.
    static func videoSenderElements(
        for source: GStreamerMediaEngine.VideoSource,
        codec: GStreamerMediaEngine.VideoCodec = .automatic
    ) -> [String] {
        let tail = ["videoconvert", "videoscale", "capsfilter", "queue"] + codec.resolved.senderElements
        switch source {
        case .test: return ["videotestsrc"] + tail
        case .v4l2: return ["v4l2src", "videorate"] + tail
        }
    }

    /// The codec of an incoming video pad, if this receiver can decode it (its elements are installed; without them
    /// the video is dropped undecoded).
    static func decodableVideoCodec(of pad: UnsafeMutablePointer<GstPad>) -> GStreamerMediaEngine.VideoCodec? {
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
        _ source: GStreamerMediaEngine.VideoSource,
        configuration: GStreamerMediaEngine.Configuration,
        into pipeline: UnsafeMutablePointer<GstElement>,
        webrtc: UnsafeMutablePointer<GstElement>
    ) throws(MediaError) {
        var chain: [UnsafeMutablePointer<GstElement>] = []
        switch source {
        case .test:
            let element = try make("videotestsrc", "video-source", in: pipeline)
            cgst_object_set_bool(element, "is-live", 1)
            gst_util_set_object_arg(gobject(element), "pattern", "ball")
            chain.append(element)
        case .v4l2(let device):
            let element = try make("v4l2src", "video-source", in: pipeline)
            if let device { cgst_object_set_string(element, "device", device) }
            // Cameras offer fixed rates: drop or duplicate frames to the configured one.
            let rate = try make("videorate", "video-rate", in: pipeline)
            gst_util_set_object_arg(gobject(rate), "drop-only", "true")
            chain += [element, rate]
        }
        let convert = try make("videoconvert", "video-convert", in: pipeline)
        let scale = try make("videoscale", "video-scale", in: pipeline)
        let rawCaps = try make("capsfilter", "video-raw-caps", in: pipeline)
        gst_util_set_object_arg(gobject(rawCaps), "caps", rawVideoCaps(configuration.videoFormat))
        // Like the audio: no backlog of raw frames while ICE/DTLS come up, and frames are dropped (before
        // encoding, so the encoded stream stays valid) when the encoder falls behind.
        let fresh = try make("queue", "fresh-video", in: pipeline)
        gst_util_set_object_arg(gobject(fresh), "leaky", "downstream")
        gst_util_set_object_arg(gobject(fresh), "max-size-buffers", "2")
        gst_util_set_object_arg(gobject(fresh), "max-size-time", "0")
        gst_util_set_object_arg(gobject(fresh), "max-size-bytes", "0")
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
        gst_util_set_object_arg(gobject(rtpCaps), "caps", caps)
        chain.append(rtpCaps)
        try link(chain)
        try linkSendOnly(rtpCaps, to: webrtc, what: "the \(codec.encodingName) payloader")
    }

    /// `vp8enc` (realtime, cpu-used 8, error-resilient, keyframe every 2 s, CBR) `! rtpvp8pay pt=96`.
    private static func makeVP8Encoder(
        configuration: GStreamerMediaEngine.Configuration,
        in pipeline: UnsafeMutablePointer<GstElement>
    ) throws(MediaError) -> [UnsafeMutablePointer<GstElement>] {
        let fps = max(1, configuration.videoFormat.framesPerSecond)
        let encoder = try make("vp8enc", "video-encoder", in: pipeline)
        gst_util_set_object_arg(gobject(encoder), "deadline", "1")
        gst_util_set_object_arg(gobject(encoder), "cpu-used", "8")
        gst_util_set_object_arg(gobject(encoder), "error-resilient", "default")
        gst_util_set_object_arg(gobject(encoder), "keyframe-max-dist", "\(2 * fps)")
        setVideoBitrate(configuration.videoBitrate, on: encoder, codec: .vp8)
        gst_util_set_object_arg(gobject(encoder), "end-usage", "cbr")
        gst_util_set_object_arg(gobject(encoder), "lag-in-frames", "0")
        gst_util_set_object_arg(gobject(encoder), "threads", "2")
        let payloader = try make("rtpvp8pay", "video-payloader", in: pipeline)
        cgst_object_set_uint(payloader, "pt", guint(vp8PayloadType))
        gst_util_set_object_arg(gobject(payloader), "picture-id-mode", "15-bit")
        return [encoder, payloader]
    }

    /// `x264enc` (zerolatency, ultrafast, no B-frames, keyframe every 2 s, CBR) `!
    /// video/x-h264,profile=constrained-baseline,stream-format=byte-stream ! rtph264pay pt=102`.
    private static func makeH264Encoder(
        configuration: GStreamerMediaEngine.Configuration,
        in pipeline: UnsafeMutablePointer<GstElement>
    ) throws(MediaError) -> [UnsafeMutablePointer<GstElement>] {
        let fps = max(1, configuration.videoFormat.framesPerSecond)
        let encoder = try make("x264enc", "video-encoder", in: pipeline)
        // zerolatency: no lookahead, no frame threads (sliced threads instead), so a frame leaves as it is encoded.
        gst_util_set_object_arg(gobject(encoder), "tune", "zerolatency")
        gst_util_set_object_arg(gobject(encoder), "speed-preset", "ultrafast")
        gst_util_set_object_arg(gobject(encoder), "bframes", "0")
        gst_util_set_object_arg(gobject(encoder), "b-adapt", "false")
        gst_util_set_object_arg(gobject(encoder), "key-int-max", "\(2 * fps)")
        gst_util_set_object_arg(gobject(encoder), "pass", "cbr")
        setVideoBitrate(configuration.videoBitrate, on: encoder, codec: .h264)
        let profile = try make("capsfilter", "video-h264-caps", in: pipeline)
        // byte-stream: x264 repeats SPS and PPS in front of every IDR frame, so a receiver that joins late or lost
        // them decodes from the next keyframe (rtph264pay's config-interval=-1 would insert them again, which
        // openh264dec fails to decode after rtph264depay).
        gst_util_set_object_arg(
            gobject(profile), "caps",
            "video/x-h264,profile=constrained-baseline,stream-format=byte-stream,alignment=au"
        )
        let payloader = try make("rtph264pay", "video-payloader", in: pipeline)
        cgst_object_set_uint(payloader, "pt", guint(h264PayloadType))
        gst_util_set_object_arg(gobject(payloader), "config-interval", "0")
        // SPS+PPS+IDR go out in one STAP-A with the first slice's packet, without waiting for the next frame.
        if cgst_object_has_property(payloader, "aggregate-mode") != 0 {
            gst_util_set_object_arg(gobject(payloader), "aggregate-mode", "zero-latency")
        }
        return [encoder, profile, payloader]
    }

    /// Sets the encoder's target bitrate (`bitrate` in kbit/s for x264enc, `target-bitrate` in bit/s for vp8enc);
    /// both encoders take a new one while playing.
    static func setVideoBitrate(
        _ bitsPerSecond: Int,
        on encoder: UnsafeMutablePointer<GstElement>,
        codec: GStreamerMediaEngine.VideoCodec
    ) {
        let bitrate = max(50_000, bitsPerSecond)
        switch codec.resolved {
        case .h264: gst_util_set_object_arg(gobject(encoder), "bitrate", "\(bitrate / 1000)")
        default: gst_util_set_object_arg(gobject(encoder), "target-bitrate", "\(bitrate)")
        }
    }

    /// A receiver's video: `<depayloader> ! [h264parse !] <decoder> ! <videoconvert ! autovideosink | fakesink>`
    /// for the pad's codec (``decodableVideoCodec(of:)``); a probe on the decoder counts the decoded frames
    /// (``Statistics/decodedVideoFrames``).
    func buildVideoOutput(
        _ output: GStreamerMediaEngine.ReceiverOutput,
        codec: GStreamerMediaEngine.VideoCodec,
        from pad: UnsafeMutablePointer<GstPad>
    ) throws(MediaError) {
        var chain: [UnsafeMutablePointer<GstElement>] = []
        let decoder: UnsafeMutablePointer<GstElement>
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
        if cgst_object_has_property(decoder, "min-force-key-unit-interval") != 0 {
            gst_util_set_object_arg(Self.gobject(decoder), "min-force-key-unit-interval", "1000000000")
        }
        chain.append(decoder)
        if output == .play, Self.hasDisplay, GStreamer.hasElement("autovideosink"),
            GStreamer.hasElement("videoconvert")
        {
            chain.append(try Self.make("videoconvert", "video-convert", in: pipeline))
            chain.append(try Self.make("autovideosink", "video-output", in: pipeline))
        } else {
            let sink = try Self.make("fakesink", "video-output", in: pipeline)
            cgst_object_set_bool(sink, "async", 0)
            cgst_object_set_bool(sink, "sync", 0)
            chain.append(sink)
        }
        try Self.link(chain)
        if let decoded = gst_element_get_static_pad(decoder, "src") {
            gst_pad_add_probe(
                decoded, GST_PAD_PROBE_TYPE_BUFFER, Self.countVideoFrame,
                Unmanaged.passRetained(statistics).toOpaque(), Self.releaseStatisticsNotify
            )
            gst_object_unref(UnsafeMutableRawPointer(decoded))
        }
        if let observer = configuration.videoObserver, let decoded = gst_element_get_static_pad(decoder, "src") {
            let types = GST_PAD_PROBE_TYPE_BUFFER.rawValue | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM.rawValue
            gst_pad_add_probe(
                decoded, GstPadProbeType(types), Self.observeDecoded, Unmanaged.passRetained(observer).toOpaque(),
                { context in context.map { Unmanaged<VideoObserver>.fromOpaque($0).release() } }
            )
            gst_object_unref(UnsafeMutableRawPointer(decoded))
        }
        if configuration.simulatedIncomingVideoLoss > 0 {
            dropIncomingVideo(share: configuration.simulatedIncomingVideoLoss, payloadType: Self.payloadType(of: pad))
        }
        for element in chain.reversed() { gst_element_sync_state_with_parent(element) }
        guard let head = gst_element_get_static_pad(chain[0], "sink") else {
            throw MediaError(code: .pipelineFailed, message: "the \(codec.encodingName) depayloader has no sink pad")
        }
        defer { gst_object_unref(UnsafeMutableRawPointer(head)) }
        guard gst_pad_link(pad, head) == GST_PAD_LINK_OK else {
            throw MediaError(
                code: .pipelineFailed,
                message: "GStreamer could not link webrtcbin to the \(codec.encodingName) decoder"
            )
        }
    }

    static func rtpEncoding(of pad: UnsafeMutablePointer<GstPad>) -> String? {
        guard let caps = gst_pad_get_current_caps(pad) ?? gst_pad_query_caps(pad, nil) else { return nil }
        defer { gst_caps_unref(caps) }
        guard gst_caps_get_size(caps) > 0, let structure = gst_caps_get_structure(caps, 0) else { return nil }
        return gst_structure_get_string(structure, "encoding-name").map { String(cString: $0).uppercased() }
    }

    static let releaseStatisticsNotify: GDestroyNotify = { context in
        guard let context else { return }
        Unmanaged<Statistics>.fromOpaque(context).release()
    }

    static let countVideoFrame: GstPadProbeCallback = { _, _, context in
        guard let context else { return GST_PAD_PROBE_REMOVE }
        Unmanaged<Statistics>.fromOpaque(context).takeUnretainedValue().decodedVideoFrames
            .add(1, ordering: .relaxed)
        return GST_PAD_PROBE_OK
    }

    static let countEncodedVideoFrame: GstPadProbeCallback = { _, _, context in
        guard let context else { return GST_PAD_PROBE_REMOVE }
        Unmanaged<Statistics>.fromOpaque(context).takeUnretainedValue().encodedVideoFrames
            .add(1, ordering: .relaxed)
        return GST_PAD_PROBE_OK
    }
}

// MARK: - Payload types

extension WebRTCPipeline {
    /// H.264's RTP payload type (Opus is 111, VP8 96).
    static let h264PayloadType = 102

    /// The `payload` field of an RTP pad's caps.
    static func payloadType(of pad: UnsafeMutablePointer<GstPad>) -> Int? {
        guard let caps = gst_pad_get_current_caps(pad) ?? gst_pad_query_caps(pad, nil) else { return nil }
        defer { gst_caps_unref(caps) }
        var payload: gint = 0
        guard gst_caps_get_size(caps) > 0, let structure = gst_caps_get_structure(caps, 0),
            gst_structure_get_int(structure, "payload", &payload) != 0
        else { return nil }
        return Int(payload)
    }
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
            guard state.connected, state.endReason == nil, !state.videoLink.requesting,
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
        guard let pad = videoSinkPad() else { return false }
        defer { gst_object_unref(UnsafeMutableRawPointer(pad)) }
        guard let ssrc = Self.ssrc(of: pad) else { return false }
        let (reports, decoders) = state.withLock { state in
            state.videoLink.start = .now
            return (state.videoLink.reports, state.dtlsDecoders)
        }
        configuration.videoObserver?.sent(configuration.videoFormat)
        reports.listen(to: ssrc)
        for decoder in decoders {
            guard let rtcp = gst_element_get_static_pad(decoder.pointer, "rtcp_src") else { continue }
            gst_pad_add_probe(
                rtcp, GST_PAD_PROBE_TYPE_BUFFER, Self.receiveRTCP, Unmanaged.passRetained(reports).toOpaque(),
                { context in context.map { Unmanaged<VideoReceiverReports>.fromOpaque($0).release() } }
            )
            gst_object_unref(UnsafeMutableRawPointer(rtcp))
        }
        return true
    }

    /// Hands each decrypted incoming RTCP packet to the ``VideoReceiverReports`` (the probe's context).
    private static let receiveRTCP: GstPadProbeCallback = { _, info, context in
        guard let info, let context, let data = info.pointee.data else { return GST_PAD_PROBE_OK }
        let reports = Unmanaged<VideoReceiverReports>.fromOpaque(context).takeUnretainedValue()
        let buffer = data.assumingMemoryBound(to: GstBuffer.self)
        var map = GstMapInfo()
        guard gst_buffer_map(buffer, &map, GST_MAP_READ) != 0 else { return GST_PAD_PROBE_OK }
        defer { gst_buffer_unmap(buffer, &map) }
        if let bytes = map.data {
            reports.receive(UnsafeBufferPointer(start: bytes, count: Int(map.size)))
        }
        return GST_PAD_PROBE_OK
    }

    /// Emits webrtcbin's `get-stats` for the video's sink pad; with the reply (the round trip), the reports heard
    /// since the previous poll go to the adaptation.
    private func requestRoundTrip(at time: ContinuousClock.Instant) {
        guard let pad = videoSinkPad() else {
            state.withLock { $0.videoLink.requesting = false }
            return
        }
        defer { gst_object_unref(UnsafeMutableRawPointer(pad)) }
        let promise = PromiseHandler.make { [self] reply in
            var roundTrip: Duration?
            if case .replied(let structure?) = reply { roundTrip = Self.roundTrip(in: structure) }
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
        Self.emitGetStats(webrtc, pad: pad, promise: promise)
        gst_promise_unref(promise)
    }

    /// Switches the raw video (the `video-raw-caps` capsfilter, which videoscale follows) and the encoder's bitrate.
    /// Both encoders restart on new caps with a keyframe (H.264 with new SPS/PPS in front of it).
    private func applyVideoLink(_ action: VideoLinkAdaptation.Action) {
        let configured = configuration.videoFormat
        let format = action == .reduce ? VideoLinkAdaptation.reducedFormat(of: configured) : configured
        let bitrate =
            action == .reduce
            ? VideoLinkAdaptation.reducedBitrate(of: configuration.videoBitrate) : configuration.videoBitrate
        if let caps = gst_bin_get_by_name(cgst_bin(pipeline), "video-raw-caps") {
            gst_util_set_object_arg(Self.gobject(caps), "caps", Self.rawVideoCaps(format))
            gst_object_unref(UnsafeMutableRawPointer(caps))
        }
        if let encoder = gst_bin_get_by_name(cgst_bin(pipeline), "video-encoder") {
            Self.setVideoBitrate(bitrate, on: encoder, codec: configuration.videoCodec)
            gst_object_unref(UnsafeMutableRawPointer(encoder))
        }
        configuration.videoObserver?.sent(format)
    }

    /// webrtcbin's sink pad the video payloader feeds (a new reference), if any.
    private func videoSinkPad() -> UnsafeMutablePointer<GstPad>? {
        guard let caps = gst_bin_get_by_name(cgst_bin(pipeline), "video-rtp-caps") else { return nil }
        defer { gst_object_unref(UnsafeMutableRawPointer(caps)) }
        guard let source = gst_element_get_static_pad(caps, "src") else { return nil }
        defer { gst_object_unref(UnsafeMutableRawPointer(source)) }
        return gst_pad_get_peer(source)
    }

    /// The SSRC in an RTP pad's caps (the payloader puts it there).
    private static func ssrc(of pad: UnsafeMutablePointer<GstPad>) -> UInt32? {
        guard let caps = gst_pad_get_current_caps(pad) else { return nil }
        defer { gst_caps_unref(caps) }
        var ssrc: guint = 0
        guard gst_caps_get_size(caps) > 0, let structure = gst_caps_get_structure(caps, 0),
            gst_structure_get_uint(structure, "ssrc", &ssrc) != 0
        else { return nil }
        return UInt32(ssrc)
    }

    /// `g_signal_emit_by_name(webrtc, "get-stats", pad, promise)` through `g_signal_emitv` (not variadic, so
    /// callable from Swift without a C wrapper).
    private static func emitGetStats(
        _ webrtc: UnsafeMutablePointer<GstElement>,
        pad: UnsafeMutablePointer<GstPad>,
        promise: UnsafeMutablePointer<GstPromise>
    ) {
        let type = gst_element_factory_get_element_type(gst_element_get_factory(webrtc))
        let signal = g_signal_lookup("get-stats", type)
        guard signal != 0 else { return }
        var arguments = [GValue](repeating: GValue(), count: 3)
        g_value_init(&arguments[0], type)
        g_value_set_object(&arguments[0], UnsafeMutableRawPointer(webrtc))
        g_value_init(&arguments[1], gst_pad_get_type())
        g_value_set_object(&arguments[1], UnsafeMutableRawPointer(pad))
        g_value_init(&arguments[2], gst_promise_get_type())
        g_value_set_boxed(&arguments[2], UnsafeRawPointer(promise))
        arguments.withUnsafeBufferPointer { values in
            g_signal_emitv(values.baseAddress, signal, 0, nil)
        }
        for index in arguments.indices { g_value_unset(&arguments[index]) }
    }

    /// The longest `round-trip-time` (seconds) of the `remote-inbound-rtp` entries in a `get-stats` reply. With
    /// max-bundle every stream shares the path, and webrtcbin 1.22 may show the video's report block under the audio
    /// (see ``VideoReceiverReports``), so any of them will do; nil before the first receiver report.
    static func roundTrip(in stats: UnsafePointer<GstStructure>) -> Duration? {
        var longest: Double?
        for index in 0..<max(0, gst_structure_n_fields(stats)) {
            guard let name = gst_structure_nth_field_name(stats, guint(index)),
                let value = gst_structure_get_value(stats, name), value.pointee.g_type == gst_structure_get_type(),
                let entry = gst_value_get_structure(value), statisticsType(entry) == "remote-inbound-rtp",
                let seconds = number(entry, "round-trip-time"), seconds > 0
            else { continue }
            longest = max(longest ?? 0, seconds)
        }
        return longest.map { .microseconds(Int64($0 * 1_000_000)) }
    }

    /// The nick of a statistics entry's `type` enum ("remote-inbound-rtp", "outbound-rtp", …).
    private static func statisticsType(_ entry: UnsafePointer<GstStructure>) -> String? {
        guard let value = gst_structure_get_value(entry, "type"),
            let enumClass = g_type_class_ref(value.pointee.g_type)
        else { return nil }
        defer { g_type_class_unref(enumClass) }
        guard
            let nick = g_enum_get_value(enumClass.assumingMemoryBound(to: GEnumClass.self), g_value_get_enum(value))?
                .pointee.value_nick
        else { return nil }
        return String(cString: nick)
    }

    /// A numeric field of any GLib number type, as a Double.
    private static func number(_ entry: UnsafePointer<GstStructure>, _ field: String) -> Double? {
        guard let value = gst_structure_get_value(entry, field) else { return nil }
        let doubleType = g_type_from_name("gdouble")
        guard g_value_type_transformable(value.pointee.g_type, doubleType) != 0 else { return nil }
        var converted = GValue()
        g_value_init(&converted, doubleType)
        defer { g_value_unset(&converted) }
        guard g_value_transform(value, &converted) != 0 else { return nil }
        let number = g_value_get_double(&converted)
        return number.isFinite ? number : nil
    }
}

// MARK: - Simulated loss (receivers, tests only)

extension WebRTCPipeline {
    /// Test-only (``GStreamerMediaEngine/Configuration/simulatedIncomingVideoLoss``): drops a share of the incoming
    /// video RTP packets where webrtcbin's DTLS-SRTP decoder hands them on, before the RTP session and jitter
    /// buffer, so the receiver reports the loss to the sender in its RTCP receiver reports as a real link would.
    private func dropIncomingVideo(share: Double, payloadType: Int?) {
        guard let payloadType, let decoder = state.withLock({ $0.dtlsDecoders.first }),
            let pad = gst_element_get_static_pad(decoder.pointer, "rtp_src")
        else { return }
        defer { gst_object_unref(UnsafeMutableRawPointer(pad)) }
        let loss = SimulatedLoss(share: share, payloadType: payloadType)
        gst_pad_add_probe(
            pad, GST_PAD_PROBE_TYPE_BUFFER, Self.simulateLoss, Unmanaged.passRetained(loss).toOpaque(),
            { context in context.map { Unmanaged<SimulatedLoss>.fromOpaque($0).release() } }
        )
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

    private static let simulateLoss: GstPadProbeCallback = { _, info, context in
        guard let info, let context, let data = info.pointee.data else { return GST_PAD_PROBE_OK }
        let loss = Unmanaged<SimulatedLoss>.fromOpaque(context).takeUnretainedValue()
        var header: (UInt8, UInt8) = (0, 0)
        let copied = withUnsafeMutableBytes(of: &header) { bytes in
            gst_buffer_extract(data.assumingMemoryBound(to: GstBuffer.self), 0, bytes.baseAddress, 2)
        }
        guard copied == 2, Int(header.1 & 0x7f) == loss.payloadType, loss.dropNext() else { return GST_PAD_PROBE_OK }
        return GST_PAD_PROBE_DROP
    }
}

// MARK: - Observer (tests only)

extension WebRTCPipeline {
    /// Hands the decoder's output sizes (caps events) and frames to the ``VideoObserver`` (the probe's context).
    private static let observeDecoded: GstPadProbeCallback = { _, info, context in
        guard let info, let context, let data = info.pointee.data else { return GST_PAD_PROBE_OK }
        let observer = Unmanaged<VideoObserver>.fromOpaque(context).takeUnretainedValue()
        if info.pointee.type.rawValue & GST_PAD_PROBE_TYPE_BUFFER.rawValue != 0 {
            observer.decodedFrame()
            return GST_PAD_PROBE_OK
        }
        let event = data.assumingMemoryBound(to: GstEvent.self)
        guard event.pointee.type == GST_EVENT_CAPS else { return GST_PAD_PROBE_OK }
        var caps: UnsafeMutablePointer<GstCaps>?
        gst_event_parse_caps(event, &caps)
        var width: gint = 0
        var height: gint = 0
        if let caps, gst_caps_get_size(caps) > 0, let structure = gst_caps_get_structure(caps, 0),
            gst_structure_get_int(structure, "width", &width) != 0,
            gst_structure_get_int(structure, "height", &height) != 0
        {
            observer.decodedSize(width: Int(width), height: Int(height))
        }
        return GST_PAD_PROBE_OK
    }
}
