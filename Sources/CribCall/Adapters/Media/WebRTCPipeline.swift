import AudioCapture
import CGStreamer
import CribCallProtocol
import DeviceIdentity
import Foundation
import GStreamer
import SoundDetection
import StreamMedia
import Synchronization

/// One run of one WebRTC peer: a GstPipeline around a `webrtcbin`.
///
/// - Sender: `<source> ! audioconvert ! audioresample ! audio/x-raw,rate=48000,channels=1 ! opusenc ! rtpopuspay !
///   application/x-rtp,…,payload=111 ! webrtcbin` (send-only transceiver); the offer is created on webrtcbin's
///   `on-negotiation-needed`. `<source>` is one element (or `filesrc ! decodebin ! identity sync=true`) so it can
///   later become the branch of a `tee` shared with sound detection.
/// - `audio_video` sender: a second branch, `<video source> ! videoconvert ! videoscale ! video/x-raw,… ! queue
///   (leaky) ! x264enc ! rtph264pay (payload 102) | vp8enc ! rtpvp8pay (96) ! application/x-rtp,… ! webrtcbin`,
///   requested after the audio (so the second m-line; max-bundle), with the weak-link downscale
///   (WebRTCPipeline+Video.swift).
/// - Receiver: a lone `webrtcbin`; an H.264 or VP8 video pad gets its depayloader and decoder `! <fakesink |
///   videoconvert ! autovideosink>` with a frame-counting probe; each incoming audio pad gets `rtpopusdepay ! opusdec ! audioconvert !
///   audioresample ! <output>` (other pads a `fakesink`); the answer is created after the remote offer is set.
///
/// Threads and ownership (why `@unchecked Sendable` is safe):
/// - Every stored property is a `let`; mutable state is in `state` (a `Mutex`) or atomics. The GStreamer objects
///   behind the pointers are thread-safe, reference-counted objects, and webrtcbin's action signals may be
///   emitted from any thread.
/// - `init` builds the elements on the caller's thread (pipeline in NULL) and installs the C callbacks. Each
///   registration holds one `Unmanaged` retain of `self`, released by GLib's destroy notify when the element (or
///   the GstPromise) is finalised, which happens in ``run()`` at the latest: it always ends by setting the
///   pipeline to NULL and dropping the only reference to it.
/// - ``run()`` executes on the peer's own thread (started by ``start()``). It alone changes states, reads the bus
///   and tears down; after it returns no code touches `pipeline` again. Callbacks on GStreamer threads only emit
///   webrtcbin signals, yield events (under the `state` lock, which keeps their order) and post on the bus.
/// - ``requestStop(reason:)`` may be called from any thread: it records the reason and posts a wake-up message
///   on the bus, which `self` keeps a reference to until `deinit`.
final class WebRTCPipeline: @unchecked Sendable {
    enum Role: Sendable {
        /// A sender of the audio and, for an `audio_video` stream, of video too.
        case sender(SenderAudio, video: GStreamerMediaEngine.VideoSource?)
        case receiver(GStreamerMediaEngine.ReceiverOutput)

        var isSender: Bool {
            if case .sender = self { return true }
            return false
        }
    }

    /// Shared with ``GStreamerMediaPeer``, for the leak checks of the tests.
    final class Statistics: Sendable {
        let pipelineFinalized = Atomic<Bool>(false)
        let pipelineObjectReleased = Atomic<Bool>(false)
        /// Video frames a sender's VP8 encoder produced.
        let encodedVideoFrames = Atomic<Int>(0)
        /// Video frames a receiver's VP8 decoder produced.
        let decodedVideoFrames = Atomic<Int>(0)
        init() {}
    }

    enum Phase {
        case created
        case running
        case ending
    }

    struct State {
        var phase = Phase.created
        /// Why the run must end (a stop request or a failure); the first reason wins.
        var endReason: String?
        var startWaiter: CheckedContinuation<Result<Void, MediaError>, Never>?
        var localMids: [String?] = []
        var remoteMids: [String?] = []
        var remoteFingerprints: [String] = []
        var createdLocalDescription = false
        /// A sender's offer as webrtcbin created it, applied locally only when the answer arrives (see
        /// ``publishLocalDescription(_:field:)``).
        var pendingLocalOffer: String?
        var hasRemoteDescription = false
        var sentEndOfCandidates = false
        var connected = false
        var decodedAudio = false
        var flowing = false
        /// The dtlssrtpdec elements (one with max-bundle), with a reference each; released in the teardown.
        var dtlsDecoders: [ObjectReference<GstElement>] = []
        /// A recording receiver's branches (WebRTCPipeline+Recording.swift).
        var recording = Recording()
        /// Whether a receiver has built its audio decoding branch.
        var decodingAudio = false
        /// Whether a receiver has built its video decoding branch.
        var decodingVideo = false
        /// A video sender's weak-link statistics and downscale (WebRTCPipeline+Video.swift).
        var videoLink = VideoLinkPolling()
    }

    static let wakeMessageName = "cribcall-media-wake"
    static let opusPayloadType = 111
    static let vp8PayloadType = 96
    /// The elements every peer needs.
    static let commonElements = ["webrtcbin", "nicesrc", "nicesink", "dtlssrtpenc", "dtlssrtpdec", "rtpbin"]

    /// Where a sender's audio comes from.
    enum SenderAudio: Sendable {
        /// Its own GStreamer source (`audiotestsrc` for `test:*`).
        case source(AudioSourceSpec)
        /// The shared microphone: an `appsrc` fed from the input's ``LiveAudioFeed``.
        case feed(LiveAudioFeed)
    }

    let role: Role
    let sessionId: String
    let configuration: GStreamerMediaEngine.Configuration
    private let dtlsPEM: String
    private let dtlsFingerprint: String
    let pipeline: UnsafeMutablePointer<GstElement>
    private let bus: UnsafeMutablePointer<GstBus>
    let webrtc: UnsafeMutablePointer<GstElement>
    private let continuation: AsyncStream<MediaEvent>.Continuation
    let statistics: Statistics
    let state = Mutex(State())
    private let stopRequested = Atomic<Bool>(false)
    private let onExit: @Sendable () -> Void
    /// A feed-fed sender's registration with the shared microphone; cancelled first thing in the teardown.
    private let feedSubscription: LiveAudioFeed.Subscription?

    /// Builds the pipeline (in NULL) and installs its callbacks. Call ``start()`` right after.
    init(
        role: Role,
        sessionId: String,
        configuration: GStreamerMediaEngine.Configuration,
        continuation: AsyncStream<MediaEvent>.Continuation,
        statistics: Statistics,
        onExit: @escaping @Sendable () -> Void
    ) throws(MediaError) {
        try MediaError.requireGStreamer()
        self.role = role
        self.sessionId = sessionId
        self.configuration = configuration
        // The private key goes to dtlssrtpdec only; it is never logged or put in an error message.
        // Each block on its own lines: OpenSSL reads nothing after an END line that runs into the next BEGIN.
        dtlsPEM =
            configuration.dtlsCertificate.certificatePEM + "\n"
            + configuration.dtlsCertificate.privateKeyPEM() + "\n"
        dtlsFingerprint = configuration.dtlsCertificate.sdpFingerprint
        let built = try Self.build(role: role, configuration: configuration)
        pipeline = built.pipeline
        webrtc = built.webrtc
        bus = gst_element_get_bus(built.pipeline)
        self.continuation = continuation
        self.statistics = statistics
        self.onExit = onExit
        if case .sender(.feed(let feed), _) = role,
            let source = gst_bin_get_by_name(cgst_bin(built.pipeline), "source")
        {
            let pusher = AppSourcePusher(source, sampleRate: feed.sampleRate)  // takes the reference
            feedSubscription = feed.subscribe { frame in pusher.push(frame.samples) }
        } else {
            feedSubscription = nil
        }
        installCallbacks()
    }

    deinit {
        gst_object_unref(bus)
        statistics.pipelineObjectReleased.store(true, ordering: .releasing)
    }

    // MARK: - Lifecycle

    /// Starts the peer's thread and returns once the pipeline is PLAYING (or throws why it is not).
    func start() async throws(MediaError) {
        let result = await withCheckedContinuation { (waiter: CheckedContinuation<Result<Void, MediaError>, Never>) in
            state.withLock { $0.startWaiter = waiter }
            let thread = Thread { [self] in run() }
            thread.name = "cribcall.webrtc"
            thread.start()
        }
        try result.get()
    }

    /// Asks the peer's thread to end the run with `reason`; returns at once. Idempotent, callable from any thread.
    func requestStop(reason: String) {
        end(reason)
        stopRequested.store(true, ordering: .releasing)
    }

    /// Records why the run ends (the first reason wins) and wakes the peer's thread.
    func end(_ reason: String) {
        let first = state.withLock { state in
            guard state.endReason == nil else { return false }
            state.endReason = reason
            return true
        }
        guard first else { return }
        _ = gst_bus_post(bus, gst_message_new_application(nil, gst_structure_new_empty(Self.wakeMessageName)))
    }

    /// Runs the pipeline until it ends, then releases it and finishes the events.
    private func run() {
        let reason = drive()
        feedSubscription?.cancel()
        gst_element_set_state(pipeline, GST_STATE_NULL)
        // Queued messages reference elements (whose callbacks retain `self`): drop them, and later posts too.
        gst_bus_set_flushing(bus, 1)
        let decoders = state.withLock { state in
            defer { state.dtlsDecoders = [] }
            return state.dtlsDecoders
        }
        for decoder in decoders { gst_object_unref(UnsafeMutableRawPointer(decoder.pointer)) }
        releaseRecording()
        // The last reference: finalises every element, which releases the callbacks' retains of `self`.
        gst_object_unref(pipeline)
        if let reason {
            state.withLock { _ in _ = continuation.yield(.ended(reason: reason)) }
            continuation.finish()
        }
        onExit()
    }

    /// Brings the pipeline up and handles the bus; returns why the run ended (nil if it never started: the
    /// start waiter got the error).
    private func drive() -> String? {
        let started = gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE
        let failure: MediaError? = started ? nil : startFailure()
        let waiter = state.withLock { state in
            defer { state.startWaiter = nil }
            if failure == nil { state.phase = .running }
            return state.startWaiter
        }
        if let failure {
            waiter?.resume(returning: .failure(failure))
            return nil
        }
        waiter?.resume(returning: .success(()))
        while true {
            if let reason = state.withLock({ $0.endReason }) {
                state.withLock { $0.phase = .ending }
                finishRecording()
                return reason
            }
            pollVideoLink()
            guard let message = gst_bus_timed_pop(bus, 250 * cgst_millisecond) else { continue }
            defer { gst_message_unref(message) }
            switch cgst_message_type(message) {
            case GST_MESSAGE_ERROR:
                end(Self.describeError(message, role: role))
            case GST_MESSAGE_EOS:
                end("the audio source ended")
            default:
                break
            }
        }
    }

    /// The error a failed start posted.
    private func startFailure() -> MediaError {
        if let message = gst_bus_timed_pop_filtered(bus, cgst_second, GST_MESSAGE_ERROR) {
            defer { gst_message_unref(message) }
            return MediaError(code: .pipelineFailed, message: Self.describeError(message, role: role))
        }
        return MediaError(
            code: .pipelineFailed,
            message: "the WebRTC pipeline did not start: run with GST_DEBUG=3 to see GStreamer's log"
        )
    }

    /// A bus ERROR as a sentence that says what to do.
    private static func describeError(_ message: UnsafeMutablePointer<GstMessage>, role: Role) -> String {
        let failure = GStreamerFailure(message: message)
        let text = failure.message
        let detail = failure.detail
        let element = failure.elementName
        let isResource = failure.domain == .resource
        var sentence = "GStreamer error in \(element): \(text)"
        if !detail.isEmpty { sentence += " (\(detail))" }
        if case .sender(.source(let source), _) = role, isResource, element == "source" {
            sentence += "; check the audio input \(source) (--audio-source)"
        } else if case .sender(_, let video?) = role, isResource, element == "video-source" {
            sentence += "; check the camera (\(video))"
        } else if !role.isSender, isResource, element.hasPrefix("output") {
            sentence += "; check the audio output (is PulseAudio running?) or record to a file"
        } else {
            sentence += "; run with GST_DEBUG=3 for GStreamer's log"
        }
        return sentence
    }

    // MARK: - Building

    private struct Built {
        var pipeline: UnsafeMutablePointer<GstElement>
        var webrtc: UnsafeMutablePointer<GstElement>
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
        }
    }

    private static func build(
        role: Role,
        configuration: GStreamerMediaEngine.Configuration
    ) throws(MediaError) -> Built {
        guard let pipeline = gst_pipeline_new("cribcall-webrtc-\(role.isSender ? "sender" : "receiver")") else {
            throw MediaError(code: .pipelineFailed, message: "GStreamer could not create a pipeline")
        }
        do throws(MediaError) {
            let webrtc = try make("webrtcbin", "webrtc", in: pipeline)
            gst_util_set_object_arg(gobject(webrtc), "bundle-policy", "max-bundle")
            let latency = configuration.jitterBufferLatency.components
            let milliseconds = latency.seconds * 1000 + latency.attoseconds / 1_000_000_000_000_000
            cgst_object_set_uint(webrtc, "latency", guint(clamping: max(0, milliseconds)))
            if let ice = cgst_object_get_object(webrtc, "ice-agent") {
                // aiortc and browsers on a LAN use UDP; TCP host candidates only add noise to the trickle.
                if cgst_object_has_property(ice, "ice-tcp") != 0 { cgst_object_set_bool(ice, "ice-tcp", 0) }
                // No UPnP: a LAN-only monitor must never ask the router to open a port to the internet (libnice
                // does by default), and waiting for the router's answer held every host candidate back ~200 ms.
                if let agent = cgst_object_get_object(ice, "agent") {
                    if cgst_object_has_property(agent, "upnp") != 0 { cgst_object_set_bool(agent, "upnp", 0) }
                    g_object_unref(agent)
                }
                g_object_unref(ice)
            }
            for address in configuration.iceAddresses {
                guard cgst_webrtc_add_local_ip_address(webrtc, address) != 0 else {
                    throw MediaError(
                        code: .pipelineFailed,
                        message: "libnice refused the ICE address '\(address)': give an IPv4 or IPv6 address of "
                            + "this machine to --ice-address"
                    )
                }
            }
            if case .sender(let source, let video) = role {
                // Audio first: its request pad makes the first transceiver, so the offer's first m-line.
                try buildSenderBranch(source, configuration: configuration, into: pipeline, webrtc: webrtc)
                if let video {
                    try buildVideoBranch(video, configuration: configuration, into: pipeline, webrtc: webrtc)
                }
            }
            return Built(pipeline: pipeline, webrtc: webrtc)
        } catch {
            gst_object_unref(pipeline)
            throw error
        }
    }

    /// Creates an element inside `bin` (which takes its floating reference).
    @discardableResult
    static func make(
        _ factory: String,
        _ name: String?,
        in bin: UnsafeMutablePointer<GstElement>
    ) throws(MediaError) -> UnsafeMutablePointer<GstElement> {
        guard let element = gst_element_factory_make(factory, name) else {
            throw MediaError(GStreamerError(MissingElements([factory])))
        }
        guard gst_bin_add(cgst_bin(bin), element) != 0 else {
            throw MediaError(code: .pipelineFailed, message: "GStreamer could not add \(factory) to the pipeline")
        }
        return element
    }

    static func link(
        _ elements: [UnsafeMutablePointer<GstElement>]
    ) throws(MediaError) {
        for (from, to) in zip(elements, elements.dropFirst()) where gst_element_link(from, to) == 0 {
            throw MediaError(
                code: .pipelineFailed,
                message: "GStreamer could not link \(String(cString: cgst_object_name(from))) to "
                    + "\(String(cString: cgst_object_name(to)))"
            )
        }
    }

    static func gobject(_ element: UnsafeMutableRawPointer) -> UnsafeMutablePointer<GObject> {
        element.assumingMemoryBound(to: GObject.self)
    }

    private static func buildSenderBranch(
        _ audio: SenderAudio,
        configuration: GStreamerMediaEngine.Configuration,
        into pipeline: UnsafeMutablePointer<GstElement>,
        webrtc: UnsafeMutablePointer<GstElement>
    ) throws(MediaError) {
        var chain: [UnsafeMutablePointer<GstElement>] = []
        var decoder: UnsafeMutablePointer<GstElement>?
        switch audio {
        case .feed(let feed):
            chain.append(try makeFeedSource(sampleRate: feed.sampleRate, in: pipeline))
        case .source(let source):
            switch source {
            case .auto:
                chain.append(try make("autoaudiosrc", "source", in: pipeline))
            case .pulse(let device):
                let element = try make("pulsesrc", "source", in: pipeline)
                cgst_object_set_string(element, "client-name", "CribCall")
                if let device { cgst_object_set_string(element, "device", device) }
                chain.append(element)
            case .alsa(let device):
                let element = try make("alsasrc", "source", in: pipeline)
                if let device { cgst_object_set_string(element, "device", device) }
                chain.append(element)
            case .file(let path):
                let element = try make("filesrc", "source", in: pipeline)
                cgst_object_set_string(element, "location", path)
                decoder = try make("decodebin", "decoder", in: pipeline)
                try link([element, decoder!])
                // A file is not live: pace it in real time (decodebin's pad is linked to this when it appears).
                let pacer = try make("identity", "pacer", in: pipeline)
                cgst_object_set_bool(pacer, "sync", 1)
                chain.append(pacer)
            case .test(let kind):
                let element = try make("audiotestsrc", "source", in: pipeline)
                cgst_object_set_bool(element, "is-live", 1)
                gst_util_set_object_arg(gobject(element), "wave", kind == .silence ? "silence" : "sine")
                gst_util_set_object_arg(gobject(element), "freq", "440")
                gst_util_set_object_arg(gobject(element), "volume", "0.5")
                gst_util_set_object_arg(gobject(element), "samplesperbuffer", "960")
                chain.append(element)
            }
        }
        // Live audio only: until ICE and DTLS are up webrtcbin holds buffers back, and a parent must not hear a
        // backlog when the stream opens. A leaky queue keeps at most the newest 60 ms.
        let fresh = try make("queue", "fresh-audio", in: pipeline)
        gst_util_set_object_arg(gobject(fresh), "leaky", "downstream")
        gst_util_set_object_arg(gobject(fresh), "max-size-time", "60000000")
        gst_util_set_object_arg(gobject(fresh), "max-size-buffers", "0")
        gst_util_set_object_arg(gobject(fresh), "max-size-bytes", "0")
        let convert = try make("audioconvert", "convert", in: pipeline)
        let resample = try make("audioresample", "resample", in: pipeline)
        let rawCaps = try make("capsfilter", "raw-caps", in: pipeline)
        gst_util_set_object_arg(gobject(rawCaps), "caps", "audio/x-raw,rate=48000,channels=1")
        let encoder = try make("opusenc", "encoder", in: pipeline)
        cgst_object_set_int(encoder, "bitrate", gint(clamping: configuration.opusBitrate))
        gst_util_set_object_arg(gobject(encoder), "audio-type", "voice")
        gst_util_set_object_arg(gobject(encoder), "frame-size", "20")
        cgst_object_set_bool(encoder, "inband-fec", 1)
        cgst_object_set_bool(encoder, "dtx", 1)
        // In-band FEC is only produced when the encoder expects loss.
        cgst_object_set_int(encoder, "packet-loss-percentage", 5)
        let payloader = try make("rtpopuspay", "payloader", in: pipeline)
        cgst_object_set_uint(payloader, "pt", guint(opusPayloadType))
        let rtpCaps = try make("capsfilter", "rtp-caps", in: pipeline)
        // Caps fields that are not RTP parameters become the SDP's a=fmtp line.
        gst_util_set_object_arg(
            gobject(rtpCaps),
            "caps",
            "application/x-rtp,media=audio,encoding-name=OPUS,clock-rate=48000,payload=\(opusPayloadType),"
                + "useinbandfec=(string)1,minptime=(string)10"
        )
        chain += [fresh, convert, resample, rawCaps, encoder, payloader, rtpCaps]
        try link(chain)
        if let decoder {
            // Bound at pad-added through a static helper: decodebin exposes its audio pad once it has typefound.
            let pacer = chain[0]
            cgst_signal_connect(
                decoder,
                "pad-added",
                unsafeBitCast(decoderPadAdded, to: GCallback.self),
                UnsafeMutableRawPointer(pacer),
                nil
            )
        }
        try linkSendOnly(rtpCaps, to: webrtc, what: "the Opus payloader")
    }

    /// The shared microphone's end in a sender: a live `appsrc` that timestamps what it is given on arrival and
    /// keeps at most 100 ms (dropping the oldest), named "source" like every sender's first element.
    private static func makeFeedSource(
        sampleRate: Int,
        in pipeline: UnsafeMutablePointer<GstElement>
    ) throws(MediaError) -> UnsafeMutablePointer<GstElement> {
        let element = try make("appsrc", "source", in: pipeline)
        gst_util_set_object_arg(
            gobject(element),
            "caps",
            "audio/x-raw,format=\(AppSourcePusher.sampleFormat),rate=\(sampleRate),channels=1,layout=interleaved"
        )
        gst_util_set_object_arg(gobject(element), "format", "time")
        cgst_object_set_bool(element, "is-live", 1)
        cgst_object_set_bool(element, "do-timestamp", 1)
        cgst_object_set_bool(element, "block", 0)
        gst_util_set_object_arg(gobject(element), "max-bytes", "\(sampleRate * MemoryLayout<Float>.size / 10)")
        gst_util_set_object_arg(gobject(element), "leaky-type", "downstream")
        return element
    }

    /// Links an RTP branch's last element to a new sink pad of webrtcbin: the request pad creates a transceiver
    /// (an m-line), which only sends.
    static func linkSendOnly(
        _ last: UnsafeMutablePointer<GstElement>,
        to webrtc: UnsafeMutablePointer<GstElement>,
        what: String
    ) throws(MediaError) {
        guard let sink = gst_element_request_pad_simple(webrtc, "sink_%u") else {
            throw MediaError(code: .pipelineFailed, message: "webrtcbin refused a sink pad")
        }
        defer { gst_object_unref(UnsafeMutableRawPointer(sink)) }
        guard let rtpSource = gst_element_get_static_pad(last, "src") else {
            throw MediaError(code: .pipelineFailed, message: "the RTP capsfilter has no source pad")
        }
        defer { gst_object_unref(UnsafeMutableRawPointer(rtpSource)) }
        guard gst_pad_link(rtpSource, sink) == GST_PAD_LINK_OK else {
            throw MediaError(code: .pipelineFailed, message: "GStreamer could not link \(what) to webrtcbin")
        }
        if let transceiver = cgst_object_get_object(sink, "transceiver") {
            gst_util_set_object_arg(gobject(transceiver), "direction", "sendonly")
            g_object_unref(transceiver)
        }
    }

    /// decodebin's `pad-added` for a file source: links the first audio pad to the pacer (`data`, owned by the
    /// pipeline, which outlives its decodebin).
    private static let decoderPadAdded:
        @convention(c) (
            UnsafeMutablePointer<GstElement>?, UnsafeMutablePointer<GstPad>?, gpointer?
        ) -> Void = { _, pad, data in
            guard let pad, let data, isCaps(of: pad, prefix: "audio/") else { return }
            let pacer = data.assumingMemoryBound(to: GstElement.self)
            guard let target = gst_element_get_static_pad(pacer, "sink") else { return }
            defer { gst_object_unref(UnsafeMutableRawPointer(target)) }
            if gst_pad_is_linked(target) == 0 { _ = gst_pad_link(pad, target) }
        }

    static func isCaps(of pad: UnsafeMutablePointer<GstPad>, prefix: String) -> Bool {
        guard let caps = gst_pad_get_current_caps(pad) ?? gst_pad_query_caps(pad, nil) else { return false }
        defer { gst_caps_unref(caps) }
        guard gst_caps_get_size(caps) > 0, let structure = gst_caps_get_structure(caps, 0) else { return false }
        let name = String(cString: gst_structure_get_name(structure))
        if name == "application/x-rtp", prefix.hasSuffix("/") {
            let media = gst_structure_get_string(structure, "media").map { String(cString: $0) } ?? ""
            return media + "/" == prefix
        }
        return name.hasPrefix(prefix)
    }

    // MARK: - Callbacks

    var context: UnsafeMutableRawPointer { Unmanaged.passRetained(self).toOpaque() }

    private func connect(_ instance: UnsafeMutableRawPointer, _ signal: String, _ handler: GCallback) {
        cgst_signal_connect(instance, signal, handler, context, Self.releaseClosureNotify)
    }

    /// Installs webrtcbin's callbacks and the finalisation probe. Each registration retains `self` once.
    private func installCallbacks() {
        connect(webrtc, "on-negotiation-needed", unsafeBitCast(Self.onNegotiationNeeded, to: GCallback.self))
        connect(webrtc, "on-ice-candidate", unsafeBitCast(Self.onIceCandidate, to: GCallback.self))
        connect(webrtc, "deep-element-added", unsafeBitCast(Self.onDeepElementAdded, to: GCallback.self))
        connect(webrtc, "pad-added", unsafeBitCast(Self.onPadAdded, to: GCallback.self))
        for property in ["ice-gathering-state", "ice-connection-state", "connection-state"] {
            connect(webrtc, "notify::\(property)", unsafeBitCast(Self.onNotify, to: GCallback.self))
        }
        if let encoder = gst_bin_get_by_name(cgst_bin(pipeline), "video-encoder") {
            if let encoded = gst_element_get_static_pad(encoder, "src") {
                gst_pad_add_probe(
                    encoded, GST_PAD_PROBE_TYPE_BUFFER, Self.countEncodedVideoFrame,
                    Unmanaged.passRetained(statistics).toOpaque(), Self.releaseStatisticsNotify
                )
                gst_object_unref(UnsafeMutableRawPointer(encoded))
            }
            gst_object_unref(UnsafeMutableRawPointer(encoder))
        }
        g_object_weak_ref(
            Self.gobject(pipeline),
            Self.pipelineFinalized,
            Unmanaged.passRetained(statistics).toOpaque()
        )
    }

    private static let releaseClosureNotify: GClosureNotify = { context, _ in
        guard let context else { return }
        Unmanaged<WebRTCPipeline>.fromOpaque(context).release()
    }

    private static let pipelineFinalized: GWeakNotify = { context, _ in
        guard let context else { return }
        Unmanaged<Statistics>.fromOpaque(context).takeRetainedValue().pipelineFinalized
            .store(true, ordering: .releasing)
    }

    private static func this(_ context: gpointer?) -> WebRTCPipeline? {
        context.map { Unmanaged<WebRTCPipeline>.fromOpaque($0).takeUnretainedValue() }
    }

    /// `void (GstElement *, gpointer)`.
    private static let onNegotiationNeeded: @convention(c) (UnsafeMutablePointer<GstElement>?, gpointer?) -> Void = {
        _, context in
        this(context)?.negotiationNeeded()
    }

    /// `void (GstElement *, guint mlineindex, gchar *candidate, gpointer)`.
    private static let onIceCandidate:
        @convention(c) (
            UnsafeMutablePointer<GstElement>?, guint, UnsafeMutablePointer<gchar>?, gpointer?
        ) -> Void = { _, mline, candidate, context in
            guard let candidate else { return }
            this(context)?.localCandidate(mline: Int(mline), String(cString: candidate))
        }

    /// `void (GstBin *, GstBin *sub_bin, GstElement *element, gpointer)`.
    private static let onDeepElementAdded:
        @convention(c) (
            UnsafeMutablePointer<GstBin>?, UnsafeMutablePointer<GstBin>?, UnsafeMutablePointer<GstElement>?, gpointer?
        ) -> Void = { _, _, element, context in
            guard let element else { return }
            this(context)?.elementAdded(element)
        }

    /// `void (GstElement *, GstPad *, gpointer)`.
    private static let onPadAdded:
        @convention(c) (
            UnsafeMutablePointer<GstElement>?, UnsafeMutablePointer<GstPad>?, gpointer?
        ) -> Void = { _, pad, context in
            guard let pad else { return }
            this(context)?.padAdded(pad)
        }

    /// `void (GObject *, GParamSpec *, gpointer)`.
    private static let onNotify: @convention(c) (gpointer?, UnsafeMutablePointer<GParamSpec>?, gpointer?) -> Void = {
        _, spec, context in
        this(context)?.stateChanged(String(cString: cgst_param_spec_name(spec)))
    }

    /// Yields an event unless the run is ending (`.ended` is yielded by ``run()`` only). The lock keeps the
    /// order of events from different GStreamer threads.
    private func yield(_ event: MediaEvent) {
        state.withLock { state in
            guard state.endReason == nil else { return }
            continuation.yield(event)
        }
    }

    // MARK: - Negotiation

    private func negotiationNeeded() {
        guard role.isSender else { return }
        let first = state.withLock { state in
            defer { state.createdLocalDescription = true }
            return !state.createdLocalDescription
        }
        guard first else { return }
        let promise = PromiseHandler.make { [self] reply in
            publishLocalDescription(reply, field: "offer")
        }
        cgst_webrtc_create_offer(webrtc, promise)
        gst_promise_unref(promise)
    }

    /// Sends the created offer/answer (with the real fingerprint) as `.localDescription`, then sets it locally,
    /// which starts ICE gathering: so the description always precedes the candidates.
    ///
    /// A sender's offer is set locally only once the answer arrives (``setRemoteDescription(_:)``), so the sender
    /// gathers no candidate before it knows the answerer's ICE credentials. Otherwise the answerer's first
    /// connectivity check can arrive before the answer does (it travels over the control channel, which a loaded
    /// machine may delay), libnice pairs it with our new host candidate, finds no credentials to check the pair
    /// with, fails the pair for good, and ICE fails 5 s later: a stream that never plays. The cost is one one-way
    /// signaling delay, since the answerer now waits for our candidates (gathering on a LAN takes no time).
    private func publishLocalDescription(_ reply: PromiseHandler.Reply, field: String) {
        guard case .replied(let structure) = reply else {
            end("webrtcbin did not create the \(field): \(reply.failure)")
            return
        }
        guard let value = gst_structure_get_value(structure, field), let boxed = g_value_get_boxed(value) else {
            end("webrtcbin did not create the \(field): \(PromiseHandler.errorText(structure) ?? "no \(field)")")
            return
        }
        let description = boxed.assumingMemoryBound(to: CGstWebRTCSessionDescription.self)
        guard let text = gst_sdp_message_as_text(description.pointee.sdp) else {
            end("webrtcbin created an \(field) that cannot be printed")
            return
        }
        let created = String(cString: text)
        g_free(text)
        let sdp = SessionDescriptionText.replacingFingerprints(in: created, with: dtlsFingerprint)
        state.withLock { state in
            state.localMids = SessionDescriptionText.mids(in: sdp)
            if role.isSender { state.pendingLocalOffer = created }
            guard state.endReason == nil else { return }
            continuation.yield(.localDescription(sdp: sdp))
        }
        if !role.isSender {
            cgst_webrtc_set_local_description(webrtc, description, nil)
        }
    }

    /// Sets the sender's offer locally (just before its answer): ICE gathering starts now.
    private func applyPendingLocalOffer() throws(MediaError) {
        guard
            let offer = state.withLock({ state in
                defer { state.pendingLocalOffer = nil }
                return state.pendingLocalOffer
            })
        else {
            throw MediaError(code: .invalidState, message: "an answer arrived before the offer was sent")
        }
        var message: UnsafeMutablePointer<GstSDPMessage>?
        guard gst_sdp_message_new_from_text(offer, &message) == GST_SDP_OK, let message else {
            throw MediaError(code: .pipelineFailed, message: "webrtcbin's own offer could not be read back")
        }
        defer { gst_sdp_message_free(message) }
        var description = CGstWebRTCSessionDescription(type: gint(CGST_WEBRTC_SDP_TYPE_OFFER.rawValue), sdp: message)
        cgst_webrtc_set_local_description(webrtc, &description, nil)
    }

    /// Applies the remote answer (sender) or offer (receiver, which then creates its answer).
    func setRemoteDescription(_ sdp: String) async throws(MediaError) {
        let type: CGstWebRTCSDPType = role.isSender ? CGST_WEBRTC_SDP_TYPE_ANSWER : CGST_WEBRTC_SDP_TYPE_OFFER
        let expected = role.isSender ? "an answer" : "an offer"
        var message: UnsafeMutablePointer<GstSDPMessage>?
        guard gst_sdp_message_new_from_text(sdp, &message) == GST_SDP_OK, let message else {
            throw MediaError(code: .invalidDescription, message: "\(expected) is not valid SDP")
        }
        defer { gst_sdp_message_free(message) }
        guard gst_sdp_message_medias_len(message) > 0 else {
            throw MediaError(code: .invalidDescription, message: "\(expected) has no media section")
        }
        let accepted: MediaError? = state.withLock { state in
            if state.endReason != nil {
                return MediaError(code: .ended, message: "the stream \(sessionId) has ended")
            }
            if state.hasRemoteDescription {
                return MediaError(code: .invalidState, message: "the stream \(sessionId) already has \(expected)")
            }
            if role.isSender && state.localMids.isEmpty {
                return MediaError(code: .invalidState, message: "an answer arrived before the offer was sent")
            }
            state.hasRemoteDescription = true
            state.remoteMids = SessionDescriptionText.mids(in: sdp)
            state.remoteFingerprints = SessionDescriptionText.fingerprints(in: sdp)
            return nil
        }
        if let accepted { throw accepted }
        if role.isSender {
            try applyPendingLocalOffer()
        } else {
            try prepareRecording(forOffer: sdp)
        }
        var description = CGstWebRTCSessionDescription(type: gint(type.rawValue), sdp: message)
        let reply = await withCheckedContinuation { (waiter: CheckedContinuation<String?, Never>) in
            let promise = PromiseHandler.make { reply in
                switch reply {
                case .replied(let structure): waiter.resume(returning: PromiseHandler.errorText(structure))
                default: waiter.resume(returning: reply.failure)
                }
            }
            cgst_webrtc_set_remote_description(webrtc, &description, promise)
            gst_promise_unref(promise)
        }
        if let reply {
            throw MediaError(code: .invalidDescription, message: "webrtcbin refused \(expected): \(reply)")
        }
        guard !role.isSender else { return }
        let promise = PromiseHandler.make { [self] reply in
            publishLocalDescription(reply, field: "answer")
        }
        cgst_webrtc_create_answer(webrtc, promise)
        gst_promise_unref(promise)
    }

    /// Hands a remote candidate (or the end of them) to webrtcbin.
    func addRemoteCandidate(_ candidate: IceCandidateMessage.Candidate) throws(MediaError) {
        let mids: [String?]? = state.withLock { state in state.endReason == nil ? state.remoteMids : nil }
        guard let mids else {
            throw MediaError(code: .ended, message: "the stream \(sessionId) has ended")
        }
        let index: Int
        if let line = candidate.sdpMLineIndex {
            index = line
        } else if let mid = candidate.sdpMid, let line = mids.firstIndex(of: mid) {
            index = line
        } else {
            index = 0
        }
        guard index >= 0, mids.isEmpty || index < mids.count else {
            throw MediaError(
                code: .invalidState,
                message: "ICE candidate for media line \(index), but the session has \(mids.count)"
            )
        }
        // An empty candidate ends the remote candidates (webrtcbin 1.22 treats "" as end-of-candidates).
        cgst_webrtc_add_ice_candidate(webrtc, guint(index), candidate.candidate)
    }

    private func localCandidate(mline: Int, _ candidate: String) {
        state.withLock { state in
            guard state.endReason == nil, !state.sentEndOfCandidates else { return }
            let mid = mline < state.localMids.count ? state.localMids[mline] : nil
            continuation.yield(.localCandidate(.init(candidate: candidate, sdpMid: mid, sdpMLineIndex: mline)))
        }
    }

    // MARK: - Connection state

    private func stateChanged(_ property: String) {
        let value = cgst_object_get_enum(webrtc, property)
        switch property {
        case "ice-gathering-state" where value == gint(CGST_WEBRTC_ICE_GATHERING_STATE_COMPLETE.rawValue):
            state.withLock { state in
                guard state.endReason == nil, !state.sentEndOfCandidates else { return }
                state.sentEndOfCandidates = true
                let mid = state.localMids.first ?? nil
                continuation.yield(.localCandidate(.init(candidate: "", sdpMid: mid, sdpMLineIndex: 0)))
            }
        case "ice-connection-state" where value == gint(CGST_WEBRTC_ICE_CONNECTION_STATE_FAILED.rawValue):
            end(
                "ICE failed: no candidate pair between the devices worked (are both on the same LAN, and is the "
                    + "right --ice-address given?)"
            )
        case "connection-state" where value == gint(CGST_WEBRTC_PEER_CONNECTION_STATE_FAILED.rawValue):
            end("the WebRTC connection failed (ICE or DTLS)")
        case "connection-state" where value == gint(CGST_WEBRTC_PEER_CONNECTION_STATE_CONNECTED.rawValue):
            connected()
        default:
            break
        }
    }

    /// ICE and DTLS are connected: checks the remote certificate against the remote SDP's fingerprint. Fails
    /// closed: until every DTLS decoder shows the peer's certificate the stream is not connected (a loaded
    /// machine may report CONNECTED first; the check is retried every 20 ms for up to 2 s, then the stream ends).
    private func connected(attempt: Int = 0) {
        let (decoders, fingerprints, ended) = state.withLock {
            ($0.dtlsDecoders, $0.remoteFingerprints, $0.endReason != nil)
        }
        guard !ended else { return }
        var unread = decoders.isEmpty
        for decoder in decoders {
            guard let pem = cgst_object_dup_string(decoder.pointer, "peer-pem") else {
                unread = true
                continue
            }
            let text = String(cString: pem)
            g_free(pem)
            guard let der = SessionDescriptionText.firstCertificateDER(inPEM: text),
                SessionDescriptionText.fingerprintsMatch(fingerprints, certificateDER: der)
            else {
                end(
                    "the remote DTLS certificate does not match the fingerprint in its session description: "
                        + "the stream was refused (someone may be intercepting it)"
                )
                return
            }
        }
        if unread {
            guard attempt < 100 else {
                end("the remote DTLS certificate could not be read to check its fingerprint: the stream was refused")
                return
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) { [self] in
                connected(attempt: attempt + 1)
            }
            return
        }
        state.withLock { state in
            state.connected = true
            _ = markFlowing(&state)
        }
    }

    /// Yields `.flowing` once: a sender when connected, a receiver when connected and audio was decoded.
    private func markFlowing(_ state: inout State) -> Bool {
        guard state.endReason == nil, !state.flowing, state.connected, role.isSender || state.decodedAudio else {
            return false
        }
        state.flowing = true
        continuation.yield(.flowing)
        return true
    }

    // MARK: - Elements and pads

    /// Sets the device certificate on each DTLS decoder webrtcbin creates (it has no certificate property).
    private func elementAdded(_ element: UnsafeMutablePointer<GstElement>) {
        guard String(cString: cgst_element_factory_name(element)) == "dtlssrtpdec" else { return }
        cgst_object_set_string(element, "pem", dtlsPEM)
        gst_object_ref(UnsafeMutableRawPointer(element))
        let reference = ObjectReference(element)
        state.withLock { $0.dtlsDecoders.append(reference) }
    }

    /// A receiver's incoming stream: decodes audio to the output, drops anything else.
    private func padAdded(_ pad: UnsafeMutablePointer<GstPad>) {
        guard case .receiver(let output) = role, gst_pad_get_direction(pad) == GST_PAD_SRC else { return }
        do throws(MediaError) {
            if Self.isCaps(of: pad, prefix: "audio/"),
                state.withLock({ state in
                    defer { state.decodingAudio = true }
                    return !state.decodingAudio
                })
            {
                if let branch = try teeIntoRecording(pad, kind: "audio") {
                    defer { gst_object_unref(UnsafeMutableRawPointer(branch)) }
                    try buildAudioOutput(.discard, from: branch)
                } else {
                    try buildAudioOutput(output, from: pad)
                }
            } else if let codec = Self.decodableVideoCodec(of: pad),
                state.withLock({ state in
                    defer { state.decodingVideo = true }
                    return !state.decodingVideo
                })
            {
                if let branch = try teeIntoRecording(pad, kind: "video", codec: codec) {
                    defer { gst_object_unref(UnsafeMutableRawPointer(branch)) }
                    try buildVideoOutput(output, codec: codec, from: branch)
                } else {
                    try buildVideoOutput(output, codec: codec, from: pad)
                }
            } else {
                let sink = try Self.make("fakesink", nil, in: pipeline)
                cgst_object_set_bool(sink, "async", 0)
                gst_element_sync_state_with_parent(sink)
                if let target = gst_element_get_static_pad(sink, "sink") {
                    _ = gst_pad_link(pad, target)
                    gst_object_unref(UnsafeMutableRawPointer(target))
                }
            }
        } catch {
            end(error.message)
        }
    }

    private func buildAudioOutput(
        _ output: GStreamerMediaEngine.ReceiverOutput,
        from pad: UnsafeMutablePointer<GstPad>
    ) throws(MediaError) {
        var chain = [
            try Self.make("rtpopusdepay", "depayloader", in: pipeline),
            try Self.make("opusdec", "decoder", in: pipeline),
            try Self.make("audioconvert", "convert", in: pipeline),
            try Self.make("audioresample", "resample", in: pipeline),
        ]
        gst_util_set_object_arg(Self.gobject(chain[1]), "use-inband-fec", "true")
        var sinkForEOS: UnsafeMutablePointer<GstElement>?
        switch output {
        case .play:
            chain.append(try Self.make("autoaudiosink", "output", in: pipeline))
        case .record(let files) where files.format == .wav:
            let caps = try Self.make("capsfilter", "output-caps", in: pipeline)
            gst_util_set_object_arg(Self.gobject(caps), "caps", "audio/x-raw,format=S16LE,rate=48000,channels=1")
            let encoder = try Self.make("wavenc", "output-encoder", in: pipeline)
            let file = try Self.make("filesink", "output", in: pipeline)
            cgst_object_set_string(file, "location", try files.create(sessionId: sessionId).path)
            cgst_object_set_bool(file, "async", 0)
            chain += [caps, encoder, file]
            sinkForEOS = file
        case .record, .discard:  // a Matroska recording records the audio before it is decoded
            let sink = try Self.make("fakesink", "output", in: pipeline)
            cgst_object_set_bool(sink, "async", 0)
            chain.append(sink)
        case .samples(let handler):
            let caps = try Self.make("capsfilter", "output-caps", in: pipeline)
            gst_util_set_object_arg(
                Self.gobject(caps), "caps",
                "audio/x-raw,format=\(AppSourcePusher.sampleFormat),rate=48000,channels=1,layout=interleaved"
            )
            let sink = try Self.make("appsink", "output", in: pipeline)
            cgst_object_set_bool(sink, "async", 0)
            // Synchronised like a speaker: each buffer comes out when it is due, pipeline latency included.
            gst_base_sink_set_sync(cgst_base_sink(sink), 1)
            var callbacks = GstAppSinkCallbacks()
            callbacks.new_sample = Self.decodedSample
            gst_app_sink_set_callbacks(
                cgst_app_sink(sink), &callbacks, Unmanaged.passRetained(handler).toOpaque(),
                Self.releaseHandlerNotify
            )
            chain += [caps, sink]
        }
        try Self.link(chain)
        // First decoded buffer → `.flowing`.
        if let decoded = gst_element_get_static_pad(chain[1], "src") {
            gst_pad_add_probe(
                decoded, GST_PAD_PROBE_TYPE_BUFFER, Self.decodedBuffer, context, Self.releaseDestroyNotify
            )
            gst_object_unref(UnsafeMutableRawPointer(decoded))
        }
        if let sinkForEOS { watchEndOfRecording(at: sinkForEOS) }
        for element in chain.reversed() { gst_element_sync_state_with_parent(element) }
        guard let head = gst_element_get_static_pad(chain[0], "sink") else {
            throw MediaError(code: .pipelineFailed, message: "the Opus depayloader has no sink pad")
        }
        guard gst_pad_link(pad, head) == GST_PAD_LINK_OK else {
            gst_object_unref(UnsafeMutableRawPointer(head))
            throw MediaError(code: .pipelineFailed, message: "GStreamer could not link webrtcbin to the Opus decoder")
        }
        if sinkForEOS != nil {
            gst_object_ref(UnsafeMutableRawPointer(pad))
            let feed = RecordingFeed(source: ObjectReference(pad), branch: ObjectReference(head))
            state.withLock { $0.recording.feeds.append(feed) }
        } else {
            gst_object_unref(UnsafeMutableRawPointer(head))
        }
    }

    static let releaseDestroyNotify: GDestroyNotify = { context in
        guard let context else { return }
        Unmanaged<WebRTCPipeline>.fromOpaque(context).release()
    }

    private static let releaseHandlerNotify: GDestroyNotify = { context in
        guard let context else { return }
        Unmanaged<GStreamerMediaEngine.DecodedAudioHandler>.fromOpaque(context).release()
    }

    /// ``GStreamerMediaEngine/ReceiverOutput/samples(_:)``: copies a due buffer out to the handler.
    private static let decodedSample: @convention(c) (UnsafeMutablePointer<GstAppSink>?, gpointer?) -> GstFlowReturn = {
        appsink, context in
        guard let appsink, let context else { return GST_FLOW_ERROR }
        let renderedAt = ContinuousClock.now
        guard let sample = gst_app_sink_pull_sample(appsink) else { return GST_FLOW_FLUSHING }
        defer { gst_sample_unref(sample) }
        guard let buffer = gst_sample_get_buffer(sample) else { return GST_FLOW_OK }
        var map = GstMapInfo()
        guard gst_buffer_map(buffer, &map, GST_MAP_READ) != 0 else { return GST_FLOW_ERROR }
        defer { gst_buffer_unmap(buffer, &map) }
        let bytes = UnsafeRawBufferPointer(start: map.data, count: Int(map.size))
        let samples = (0..<(bytes.count / 4)).map { bytes.loadUnaligned(fromByteOffset: $0 * 4, as: Float.self) }
        Unmanaged<GStreamerMediaEngine.DecodedAudioHandler>.fromOpaque(context).takeUnretainedValue()
            .handle(samples, renderedAt)
        return GST_FLOW_OK
    }

    private static let decodedBuffer: GstPadProbeCallback = { _, _, context in
        guard let this = this(context) else { return GST_PAD_PROBE_REMOVE }
        this.state.withLock { state in
            state.decodedAudio = true
            _ = this.markFlowing(&state)
        }
        return GST_PAD_PROBE_REMOVE
    }

    /// Wakes the run loop (it polls the bus).
    func wake() {
        _ = gst_bus_post(bus, gst_message_new_application(nil, gst_structure_new_empty(Self.wakeMessageName)))
    }

    /// Waits up to `milliseconds` for a bus message and drops it (the run loop has stopped reading the bus).
    func waitForBusMessage(milliseconds: UInt) {
        if let message = gst_bus_timed_pop(bus, milliseconds * cgst_millisecond) { gst_message_unref(message) }
    }
}

/// A pointer to a GStreamer object the holder has a reference to. GstObjects are thread-safe and reference-counted,
/// so the pointer may cross threads (hence `@unchecked Sendable`); the holder releases the reference.
struct ObjectReference<Object>: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<Object>

    init(_ pointer: UnsafeMutablePointer<Object>) {
        self.pointer = pointer
    }
}
