import AudioCapture
import GStreamer
import SoundDetection

/// Building a peer's pipeline: webrtcbin with its ICE settings, and a sender's audio branch (`<source> ! queue
/// (leaky) ! audioconvert ! audioresample ! opusenc ! rtpopuspay ! webrtcbin`); the video branch is in
/// WebRTCPipeline+Video.swift.
extension WebRTCPipeline {
    struct Built {
        var pipeline: Pipeline
        var webrtc: WebRTCBin
    }

    /// The elements a sender with `audio` needs.
    static func senderElements(for audio: SenderAudio) -> [String] {
        let tail = ["queue", "audioconvert", "audioresample", "capsfilter", "opusenc", "rtpopuspay"]
        guard case .source(let source) = audio else { return ["appsrc"] + tail }
        switch source {
        case .auto: return ["autoaudiosrc"] + tail
        case .pulse: return ["pulsesrc"] + tail
        case .alsa: return ["alsasrc"] + tail
        case .file: return ["filesrc", "decodebin", "identity"] + tail
        case .test: return ["audiotestsrc"] + tail
        }
    }

    /// The elements a receiver with `output` needs.
    static func receiverElements(for output: GStreamerMediaEngine.ReceiverOutput) -> [String] {
        let head = ["rtpopusdepay", "opusdec", "audioconvert", "audioresample", "fakesink"]
        switch output {
        case .play: return head + ["autoaudiosink"]
        case .record(let files) where files.format == .wav: return head + ["capsfilter", "wavenc", "filesink"]
        case .record: return head + ["tee", "queue", "matroskamux", "filesink"]
        case .discard: return head
        case .samples: return head + ["capsfilter", "appsink"]
        case .pictures: return head + ["videoconvert", "videorate", "jpegenc", "appsink"]
        }
    }

    static func build(
        role: Role,
        configuration: GStreamerMediaEngine.Configuration
    ) throws(MediaError) -> Built {
        let pipeline: Pipeline
        do {
            pipeline = try Pipeline(name: "cribcall-webrtc-\(role.isSender ? "sender" : "receiver")")
        } catch {
            throw MediaError(error)
        }
        let webrtc = WebRTCBin(try make("webrtcbin", "webrtc", in: pipeline))
        webrtc.element.set("bundle-policy", parsing: "max-bundle")
        let latency = configuration.jitterBufferLatency.components
        let milliseconds = latency.seconds * 1000 + latency.attoseconds / 1_000_000_000_000_000
        webrtc.element.set("latency", UInt32(clamping: max(0, milliseconds)))
        // aiortc and browsers on a LAN use UDP; TCP host candidates only add noise to the trickle. No UPnP: a
        // LAN-only monitor must never ask the router to open a port to the internet (libnice does by default), and
        // waiting for the router's answer held every host candidate back ~200 ms.
        webrtc.restrictICE(udpOnly: true, allowUPnP: false)
        for address in configuration.iceAddresses where !webrtc.addLocalAddress(address) {
            throw MediaError(
                code: .pipelineFailed,
                message: "libnice refused the ICE address '\(address)': give an IPv4 or IPv6 address of "
                    + "this machine to --ice-address"
            )
        }
        if case .sender(let source, let video) = role {
            // Audio first: its request pad makes the first transceiver, so the offer's first m-line.
            try buildSenderBranch(source, configuration: configuration, into: pipeline, webrtc: webrtc)
            if let video {
                try buildVideoBranch(video, configuration: configuration, into: pipeline, webrtc: webrtc)
            }
        }
        return Built(pipeline: pipeline, webrtc: webrtc)
    }

    /// Creates an element inside `pipeline`.
    @discardableResult
    static func make(_ factory: String, _ name: String?, in pipeline: Pipeline) throws(MediaError) -> Element {
        do {
            return try pipeline.make(factory, name: name)
        } catch {
            throw MediaError(error)
        }
    }

    /// Links each element to the next.
    static func link(_ elements: [Element], in pipeline: Pipeline) throws(MediaError) {
        do {
            try pipeline.link(elements)
        } catch {
            throw MediaError(error)
        }
    }

    private static func buildSenderBranch(
        _ audio: SenderAudio,
        configuration: GStreamerMediaEngine.Configuration,
        into pipeline: Pipeline,
        webrtc: WebRTCBin
    ) throws(MediaError) {
        var chain: [Element] = []
        var decoder: Element?
        switch audio {
        case .feed(let feed):
            chain.append(try makeFeedSource(sampleRate: feed.sampleRate, in: pipeline))
        case .source(let source):
            switch source {
            case .auto:
                chain.append(try make("autoaudiosrc", "source", in: pipeline))
            case .pulse(let device):
                let element = try make("pulsesrc", "source", in: pipeline)
                element.set("client-name", "CribCall")
                if let device { element.set("device", device) }
                chain.append(element)
            case .alsa(let device):
                let element = try make("alsasrc", "source", in: pipeline)
                if let device { element.set("device", device) }
                chain.append(element)
            case .file(let path):
                let element = try make("filesrc", "source", in: pipeline)
                element.set("location", path)
                let fileDecoder = try make("decodebin", "decoder", in: pipeline)
                try link([element, fileDecoder], in: pipeline)
                decoder = fileDecoder
                // A file is not live: pace it in real time (decodebin's pad is linked to this when it appears).
                let pacer = try make("identity", "pacer", in: pipeline)
                pacer.set("sync", true)
                chain.append(pacer)
            case .test(let kind):
                let element = try make("audiotestsrc", "source", in: pipeline)
                element.set("is-live", true)
                element.set("wave", parsing: kind == .silence ? "silence" : "sine")
                element.set("freq", parsing: "440")
                element.set("volume", parsing: "0.5")
                element.set("samplesperbuffer", parsing: "960")
                chain.append(element)
            }
        }
        // Live audio only: until ICE and DTLS are up webrtcbin holds buffers back, and a parent must not hear a
        // backlog when the stream opens. A leaky queue keeps at most the newest 60 ms.
        let fresh = try make("queue", "fresh-audio", in: pipeline)
        fresh.set("leaky", parsing: "downstream")
        fresh.set("max-size-time", parsing: "60000000")
        fresh.set("max-size-buffers", parsing: "0")
        fresh.set("max-size-bytes", parsing: "0")
        let convert = try make("audioconvert", "convert", in: pipeline)
        let resample = try make("audioresample", "resample", in: pipeline)
        let rawCaps = try make("capsfilter", "raw-caps", in: pipeline)
        rawCaps.set("caps", parsing: "audio/x-raw,rate=48000,channels=1")
        let encoder = try make("opusenc", "encoder", in: pipeline)
        encoder.set("bitrate", Int32(clamping: configuration.opusBitrate))
        encoder.set("audio-type", parsing: "voice")
        encoder.set("frame-size", parsing: "20")
        encoder.set("inband-fec", true)
        encoder.set("dtx", true)
        // In-band FEC is only produced when the encoder expects loss.
        encoder.set("packet-loss-percentage", Int32(5))
        let payloader = try make("rtpopuspay", "payloader", in: pipeline)
        payloader.set("pt", UInt32(opusPayloadType))
        let rtpCaps = try make("capsfilter", "rtp-caps", in: pipeline)
        // Caps fields that are not RTP parameters become the SDP's a=fmtp line.
        rtpCaps.set(
            "caps",
            parsing: "application/x-rtp,media=audio,encoding-name=OPUS,clock-rate=48000,payload=\(opusPayloadType),"
                + "useinbandfec=(string)1,minptime=(string)10"
        )
        chain += [fresh, convert, resample, rawCaps, encoder, payloader, rtpCaps]
        try link(chain, in: pipeline)
        if let decoder {
            // decodebin exposes its audio pad once it has typefound: link the first one to the pacer.
            let pacerInput = chain[0].staticPad("sink")
            decoder.onPadAdded { pad in
                guard isCaps(of: pad, prefix: "audio/"), let pacerInput, !pacerInput.isLinked else { return }
                _ = pad.link(to: pacerInput)
            }
        }
        try linkSendOnly(rtpCaps, to: webrtc, what: "the Opus payloader")
    }

    /// The shared microphone's end in a sender: a live `appsrc` that timestamps what it is given on arrival and
    /// keeps at most 100 ms (dropping the oldest), named "source" like every sender's first element.
    private static func makeFeedSource(sampleRate: Int, in pipeline: Pipeline) throws(MediaError) -> Element {
        let element = try make("appsrc", "source", in: pipeline)
        element.set(
            "caps",
            parsing: GStreamer.monoFloatCaps(rate: sampleRate)
        )
        element.set("format", parsing: "time")
        element.set("is-live", true)
        element.set("do-timestamp", true)
        element.set("block", false)
        element.set("max-bytes", parsing: "\(sampleRate * MemoryLayout<Float>.size / 10)")
        element.set("leaky-type", parsing: "downstream")
        return element
    }

    /// Links an RTP branch's last element to a new sink pad of webrtcbin: the request pad creates a transceiver
    /// (an m-line), which only sends.
    static func linkSendOnly(_ last: Element, to webrtc: WebRTCBin, what: String) throws(MediaError) {
        do {
            try webrtc.linkSendOnly(from: last, what: what)
        } catch {
            throw MediaError(error)
        }
    }

    /// Whether a pad carries `prefix` media ("audio/", "video/"): raw or encoded caps, or RTP whose `media` field
    /// says so.
    static func isCaps(of pad: Pad, prefix: String) -> Bool {
        guard let name = pad.mediaType else { return false }
        if name == "application/x-rtp", prefix.hasSuffix("/") {
            return (pad.capsString("media") ?? "") + "/" == prefix
        }
        return name.hasPrefix(prefix)
    }
}
