import CGStreamer
import Foundation
import Synchronization

/// The video half of a peer: an `audio_video` sender's camera (or test pattern) → encoder → payloader branch, and a
/// receiver's depayloader → decoder → display (or counting sink).
extension WebRTCPipeline {
    /// The elements an `audio_video` sender needs for its video from `source`.
    static func videoSenderElements(for source: GStreamerMediaEngine.VideoSource) -> [String] {
        let tail = ["videoconvert", "videoscale", "capsfilter", "queue", "vp8enc", "rtpvp8pay"]
        switch source {
        case .test: return ["videotestsrc"] + tail
        case .v4l2: return ["v4l2src", "videorate"] + tail
        }
    }

    /// The elements a receiver needs to decode VP8 video (without them, video is dropped undecoded).
    static let videoReceiverElements = ["rtpvp8depay", "vp8dec", "fakesink"]

    /// Whether decoded video should be shown: only when playing and a display exists.
    static var hasDisplay: Bool {
        let environment = ProcessInfo.processInfo.environment
        return !(environment["DISPLAY"] ?? "").isEmpty || !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty
    }

    /// An `audio_video` sender's video: `<source> ! videoconvert ! videoscale ! video/x-raw,width,height,framerate
    /// ! queue (leaky) ! vp8enc (realtime) ! rtpvp8pay ! application/x-rtp,…,payload=96 ! webrtcbin`.
    static func buildVideoBranch(
        _ source: GStreamerMediaEngine.VideoSource,
        configuration: GStreamerMediaEngine.Configuration,
        into pipeline: UnsafeMutablePointer<GstElement>,
        webrtc: UnsafeMutablePointer<GstElement>
    ) throws(MediaError) {
        let format = configuration.videoFormat
        let fps = max(1, format.framesPerSecond)
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
        gst_util_set_object_arg(
            gobject(rawCaps),
            "caps",
            "video/x-raw,format=I420,width=\(max(16, format.width)),height=\(max(16, format.height)),"
                + "framerate=\(fps)/1,pixel-aspect-ratio=1/1"
        )
        // Like the audio: no backlog of raw frames while ICE/DTLS come up, and frames are dropped (before
        // encoding, so the VP8 stream stays valid) when the encoder falls behind.
        let fresh = try make("queue", "fresh-video", in: pipeline)
        gst_util_set_object_arg(gobject(fresh), "leaky", "downstream")
        gst_util_set_object_arg(gobject(fresh), "max-size-buffers", "2")
        gst_util_set_object_arg(gobject(fresh), "max-size-time", "0")
        gst_util_set_object_arg(gobject(fresh), "max-size-bytes", "0")
        let encoder = try make("vp8enc", "video-encoder", in: pipeline)
        gst_util_set_object_arg(gobject(encoder), "deadline", "1")
        gst_util_set_object_arg(gobject(encoder), "cpu-used", "8")
        gst_util_set_object_arg(gobject(encoder), "error-resilient", "default")
        gst_util_set_object_arg(gobject(encoder), "keyframe-max-dist", "\(2 * fps)")
        gst_util_set_object_arg(gobject(encoder), "target-bitrate", "\(max(50_000, configuration.videoBitrate))")
        gst_util_set_object_arg(gobject(encoder), "end-usage", "cbr")
        gst_util_set_object_arg(gobject(encoder), "lag-in-frames", "0")
        gst_util_set_object_arg(gobject(encoder), "threads", "2")
        let payloader = try make("rtpvp8pay", "video-payloader", in: pipeline)
        cgst_object_set_uint(payloader, "pt", guint(vp8PayloadType))
        gst_util_set_object_arg(gobject(payloader), "picture-id-mode", "15-bit")
        let rtpCaps = try make("capsfilter", "video-rtp-caps", in: pipeline)
        // rtcp-fb fields become a=rtcp-fb lines: a receiver's PLI/FIR makes webrtcbin ask the encoder for a keyframe.
        gst_util_set_object_arg(
            gobject(rtpCaps),
            "caps",
            "application/x-rtp,media=video,encoding-name=VP8,clock-rate=90000,payload=\(vp8PayloadType),"
                + "rtcp-fb-nack-pli=(boolean)true,rtcp-fb-ccm-fir=(boolean)true"
        )
        chain += [convert, scale, rawCaps, fresh, encoder, payloader, rtpCaps]
        try link(chain)
        try linkSendOnly(rtpCaps, to: webrtc, what: "the VP8 payloader")
    }

    /// A receiver's video: `rtpvp8depay ! vp8dec ! <videoconvert ! autovideosink | fakesink>`; a probe on the
    /// decoder counts the decoded frames (``Statistics/decodedVideoFrames``).
    func buildVideoOutput(
        _ output: GStreamerMediaEngine.ReceiverOutput,
        from pad: UnsafeMutablePointer<GstPad>
    ) throws(MediaError) {
        var chain = [
            try Self.make("rtpvp8depay", "video-depayloader", in: pipeline),
            try Self.make("vp8dec", "video-decoder", in: pipeline),
        ]
        if output == .play, Self.hasDisplay, MediaRuntime.hasElement("autovideosink"),
            MediaRuntime.hasElement("videoconvert")
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
        if let decoded = gst_element_get_static_pad(chain[1], "src") {
            gst_pad_add_probe(
                decoded, GST_PAD_PROBE_TYPE_BUFFER, Self.countVideoFrame,
                Unmanaged.passRetained(statistics).toOpaque(), Self.releaseStatisticsNotify
            )
            gst_object_unref(UnsafeMutableRawPointer(decoded))
        }
        for element in chain.reversed() { gst_element_sync_state_with_parent(element) }
        guard let head = gst_element_get_static_pad(chain[0], "sink") else {
            throw MediaError(code: .pipelineFailed, message: "the VP8 depayloader has no sink pad")
        }
        defer { gst_object_unref(UnsafeMutableRawPointer(head)) }
        guard gst_pad_link(pad, head) == GST_PAD_LINK_OK else {
            throw MediaError(code: .pipelineFailed, message: "GStreamer could not link webrtcbin to the VP8 decoder")
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
