import GStreamer

extension GStreamerMediaEngine {
    /// The codec an `audio_video` sender encodes its video with (``Configuration/videoCodec``).
    ///
    /// The offer names one codec: webrtcbin 1.22 sends whatever its sink pad is fed, so offering H.264 and VP8
    /// together would mean building the encoder only once the answer has picked one (see the Media README).
    /// Every receiver CribCall talks to decodes H.264 (our own with `openh264dec`, browsers, aiortc), so
    /// ``automatic`` picks H.264 whenever its elements are installed.
    public enum VideoCodec: Sendable, Hashable {
        /// H.264 when `x264enc` (gstreamer1.0-plugins-ugly) and `rtph264pay` are installed, otherwise VP8.
        case automatic
        /// H.264 constrained baseline: `x264enc` (zero latency, no B-frames) → `rtph264pay`, payload type 102.
        case h264
        /// VP8: `vp8enc` (realtime) → `rtpvp8pay`, payload type 96.
        case vp8
    }
}

extension GStreamerMediaEngine.VideoCodec {
    /// The codec a sender uses: ``h264`` or ``vp8``, never ``automatic``.
    var resolved: Self {
        switch self {
        case .automatic:
            let h264 = Self.h264.senderElements.allSatisfy(GStreamer.hasElement)
            return h264 ? .h264 : .vp8
        case .h264, .vp8:
            return self
        }
    }

    /// The codec of an incoming stream, from the RTP caps' `encoding-name` (nil: one we do not decode).
    init?(encodingName: String) {
        switch encodingName.uppercased() {
        case "H264": self = .h264
        case "VP8": self = .vp8
        default: return nil
        }
    }

    /// The RTP `encoding-name` (and SDP `a=rtpmap` name).
    var encodingName: String {
        switch resolved {
        case .h264: return "H264"
        default: return "VP8"
        }
    }

    /// The RTP payload type the sender uses (distinct from Opus's 111).
    var payloadType: Int {
        switch resolved {
        case .h264: return WebRTCPipeline.h264PayloadType
        default: return WebRTCPipeline.vp8PayloadType
        }
    }

    /// The encoder and payloader elements (after the raw-video capsfilter and queue).
    var senderElements: [String] {
        switch self {
        case .automatic: return resolved.senderElements
        case .h264: return ["x264enc", "capsfilter", "rtph264pay"]
        case .vp8: return ["vp8enc", "rtpvp8pay"]
        }
    }

    /// The depayloader, parser and decoder a receiver needs (all in plugins-good/-bad: no new package).
    var receiverElements: [String] {
        switch resolved {
        // openh264dec (plugins-bad, which depends on libopenh264-7) needs the `profile` caps field that
        // rtph264depay does not set: h264parse adds it.
        case .h264: return ["rtph264depay", "h264parse", "openh264dec"]
        default: return ["rtpvp8depay", "vp8dec"]
        }
    }
}

extension GStreamerMediaEngine.VideoCodec {
    /// The H.264 `profile-level-id` to announce for `format`: constrained baseline (`42e0`) at the lowest level that
    /// holds the format, at least 3.1 (`42e01f`, the value browsers and aiortc offer themselves).
    static func h264ProfileLevelId(for format: GStreamerMediaEngine.VideoFormat) -> String {
        // (level_idc, max macroblocks per second, max macroblocks per frame), H.264 Table A-1.
        let levels: [(id: Int, perSecond: Int, perFrame: Int)] = [
            (0x1f, 108_000, 3_600), (0x20, 216_000, 5_120), (0x28, 245_760, 8_192), (0x2a, 522_240, 8_704),
            (0x32, 589_824, 22_080), (0x33, 983_040, 36_864),
        ]
        let frame = ((max(1, format.width) + 15) / 16) * ((max(1, format.height) + 15) / 16)
        let second = frame * max(1, format.framesPerSecond)
        let level = levels.first { frame <= $0.perFrame && second <= $0.perSecond }?.id ?? 0x33
        return "42e0" + String(level, radix: 16)
    }
}
