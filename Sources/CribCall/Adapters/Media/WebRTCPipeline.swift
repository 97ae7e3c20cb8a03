import AudioCapture
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
/// Threads and ownership:
/// - Every stored property is a `let`; mutable state is in `state` (a `Mutex`) or atomics. The GStreamer adapter's
///   objects are thread-safe, and webrtcbin's action signals may be emitted from any thread.
/// - `init` builds the elements on the caller's thread (pipeline in NULL) and installs the callbacks, which
///   capture `self`; GLib releases them when the element (or the promise) is finalised, which happens in ``run()``
///   at the latest: it always ends with ``Pipeline/tearDown()``.
/// - ``run()`` executes on the peer's own thread (started by ``start()``). It alone changes states, reads the bus
///   and tears down; after it returns no code touches `pipeline` again. Callbacks on GStreamer threads only emit
///   webrtcbin signals, yield events (under the `state` lock, which keeps their order) and post on the bus.
/// - ``requestStop(reason:)`` may be called from any thread: it records the reason and posts a wake-up message
///   on the bus, which `self` keeps a reference to until `deinit`.
final class WebRTCPipeline: Sendable {
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
        var dtlsDecoders: [RetainedElement] = []
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
    let pipeline: Pipeline
    let webrtc: WebRTCBin
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
        self.continuation = continuation
        self.statistics = statistics
        self.onExit = onExit
        if case .sender(.feed(let feed), _) = role, let source = built.pipeline.element(named: "source") {
            let pusher = AppSource(source)
            feedSubscription = feed.subscribe { frame in pusher.push(frame.samples) }
        } else {
            feedSubscription = nil
        }
        installCallbacks()
    }

    deinit {
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
        wake()
    }

    /// Runs the pipeline until it ends, then releases it and finishes the events.
    private func run() {
        let reason = drive()
        feedSubscription?.cancel()
        // NULL, the bus flushed, the last reference dropped: every element is finalised (those we hold a
        // reference to once it is released below), which releases the callbacks and their hold on `self`.
        pipeline.tearDown()
        state.withLock { $0.dtlsDecoders = [] }
        releaseRecording()
        if let reason {
            state.withLock { _ in _ = continuation.yield(.ended(reason: reason)) }
            continuation.finish()
        }
        onExit()
    }

    /// Brings the pipeline up and handles the bus; returns why the run ended (nil if it never started: the
    /// start waiter got the error).
    private func drive() -> String? {
        let started = pipeline.setState(.playing)
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
            guard let message = pipeline.bus.pop(timeout: .milliseconds(250)) else { continue }
            switch message.kind {
            case .error(let failure):
                end(Self.describe(failure, role: role))
            case .endOfStream:
                end("the audio source ended")
            default:
                break
            }
        }
    }

    /// The error a failed start posted.
    private func startFailure() -> MediaError {
        if let failure = pipeline.bus.popError(timeout: .seconds(1)) {
            return MediaError(code: .pipelineFailed, message: Self.describe(failure, role: role))
        }
        return MediaError(
            code: .pipelineFailed,
            message: "the WebRTC pipeline did not start: run with GST_DEBUG=3 to see GStreamer's log"
        )
    }

    /// A bus ERROR as a sentence that says what to do.
    private static func describe(_ failure: GStreamerFailure, role: Role) -> String {
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
        }
    }

    private static func build(
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
            parsing:
                "audio/x-raw,format=\(AppSource.nativeFloatFormat),rate=\(sampleRate),channels=1,layout=interleaved"
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

    // MARK: - Callbacks

    /// Installs webrtcbin's callbacks and the finalisation probe. Each captures `self` until webrtcbin is finalised.
    private func installCallbacks() {
        webrtc.onNegotiationNeeded { [self] in negotiationNeeded() }
        webrtc.onICECandidate { [self] mline, candidate in localCandidate(mline: mline, candidate) }
        webrtc.onElementAdded { [self] element in elementAdded(element) }
        webrtc.element.onPadAdded { [self] pad in padAdded(pad) }
        webrtc.onStateChange { [self] change in stateChanged(change) }
        if let encoded = pipeline.element(named: "video-encoder")?.staticPad("src") {
            encoded.addProbe(.buffers) { [statistics] _ in
                statistics.encodedVideoFrames.add(1, ordering: .relaxed)
                return .pass
            }
        }
        pipeline.onFinalized { [statistics] in
            statistics.pipelineFinalized.store(true, ordering: .releasing)
        }
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
        webrtc.create(.offer) { [self] created in
            publishLocalDescription(created, type: .offer)
        }
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
    private func publishLocalDescription(
        _ result: Result<String, WebRTCBin.DescriptionError>,
        type: WebRTCBin.DescriptionType
    ) {
        let field = type == .offer ? "offer" : "answer"
        let created: String
        switch result {
        case .success(let text): created = text
        case .failure(let error):
            end("webrtcbin did not create the \(field): \(error.reason)")
            return
        }
        let sdp = SessionDescriptionText.replacingFingerprints(in: created, with: dtlsFingerprint)
        state.withLock { state in
            state.localMids = SessionDescriptionText.mids(in: sdp)
            if role.isSender { state.pendingLocalOffer = created }
            guard state.endReason == nil else { return }
            continuation.yield(.localDescription(sdp: sdp))
        }
        if !role.isSender {
            do {
                try webrtc.setLocalDescription(.answer, created)
            } catch {
                end("webrtcbin's own answer could not be read back")
            }
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
        do {
            try webrtc.setLocalDescription(.offer, offer)
        } catch {
            throw MediaError(code: .pipelineFailed, message: "webrtcbin's own offer could not be read back")
        }
    }

    /// Applies the remote answer (sender) or offer (receiver, which then creates its answer).
    func setRemoteDescription(_ sdp: String) async throws(MediaError) {
        let type: WebRTCBin.DescriptionType = role.isSender ? .answer : .offer
        let expected = role.isSender ? "an answer" : "an offer"
        guard let mediaSections = WebRTCBin.mediaSectionCount(in: sdp) else {
            throw MediaError(code: .invalidDescription, message: "\(expected) is not valid SDP")
        }
        guard mediaSections > 0 else {
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
        let refusal = await withCheckedContinuation { (waiter: CheckedContinuation<String?, Never>) in
            do throws(GStreamerError) {
                try webrtc.setRemoteDescription(type, sdp) { refusal in waiter.resume(returning: refusal?.reason) }
            } catch {
                waiter.resume(returning: error.message)
            }
        }
        if let refusal {
            throw MediaError(code: .invalidDescription, message: "webrtcbin refused \(expected): \(refusal)")
        }
        guard !role.isSender else { return }
        webrtc.create(.answer) { [self] created in
            publishLocalDescription(created, type: .answer)
        }
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
        webrtc.addICECandidate(mlineIndex: index, candidate.candidate)
    }

    private func localCandidate(mline: Int, _ candidate: String) {
        state.withLock { state in
            guard state.endReason == nil, !state.sentEndOfCandidates else { return }
            let mid = mline < state.localMids.count ? state.localMids[mline] : nil
            continuation.yield(.localCandidate(.init(candidate: candidate, sdpMid: mid, sdpMLineIndex: mline)))
        }
    }

    // MARK: - Connection state

    private func stateChanged(_ change: WebRTCBin.StateChange) {
        switch change {
        case .iceGatheringComplete:
            state.withLock { state in
                guard state.endReason == nil, !state.sentEndOfCandidates else { return }
                state.sentEndOfCandidates = true
                let mid = state.localMids.first ?? nil
                continuation.yield(.localCandidate(.init(candidate: "", sdpMid: mid, sdpMLineIndex: 0)))
            }
        case .iceConnectionFailed:
            end(
                "ICE failed: no candidate pair between the devices worked (are both on the same LAN, and is the "
                    + "right --ice-address given?)"
            )
        case .connectionFailed:
            end("the WebRTC connection failed (ICE or DTLS)")
        case .connected:
            connected()
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
            guard let text = decoder.element.string("peer-pem") else {
                unread = true
                continue
            }
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
    private func elementAdded(_ element: Element) {
        guard element.factoryName == "dtlssrtpdec" else { return }
        element.set("pem", dtlsPEM)
        let reference = element.retained()
        state.withLock { $0.dtlsDecoders.append(reference) }
    }

    /// A receiver's incoming stream: decodes audio to the output, drops anything else.
    private func padAdded(_ pad: Pad) {
        guard case .receiver(let output) = role, pad.isSource else { return }
        do throws(MediaError) {
            if Self.isCaps(of: pad, prefix: "audio/"),
                state.withLock({ state in
                    defer { state.decodingAudio = true }
                    return !state.decodingAudio
                })
            {
                if let branch = try teeIntoRecording(pad, kind: "audio") {
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
                    try buildVideoOutput(output, codec: codec, from: branch)
                } else {
                    try buildVideoOutput(output, codec: codec, from: pad)
                }
            } else {
                let sink = try Self.make("fakesink", nil, in: pipeline)
                sink.set("async", false)
                sink.syncStateWithParent()
                if let target = sink.staticPad("sink") { _ = pad.link(to: target) }
            }
        } catch {
            end(error.message)
        }
    }

    private func buildAudioOutput(_ output: GStreamerMediaEngine.ReceiverOutput, from pad: Pad) throws(MediaError) {
        var chain = [
            try Self.make("rtpopusdepay", "depayloader", in: pipeline),
            try Self.make("opusdec", "decoder", in: pipeline),
            try Self.make("audioconvert", "convert", in: pipeline),
            try Self.make("audioresample", "resample", in: pipeline),
        ]
        chain[1].set("use-inband-fec", parsing: "true")
        var sinkForEOS: Element?
        switch output {
        case .play:
            chain.append(try Self.make("autoaudiosink", "output", in: pipeline))
        case .record(let files) where files.format == .wav:
            let caps = try Self.make("capsfilter", "output-caps", in: pipeline)
            caps.set("caps", parsing: "audio/x-raw,format=S16LE,rate=48000,channels=1")
            let encoder = try Self.make("wavenc", "output-encoder", in: pipeline)
            let file = try Self.make("filesink", "output", in: pipeline)
            file.set("location", try files.create(sessionId: sessionId).path)
            file.set("async", false)
            chain += [caps, encoder, file]
            sinkForEOS = file
        case .record, .discard:  // a Matroska recording records the audio before it is decoded
            let sink = try Self.make("fakesink", "output", in: pipeline)
            sink.set("async", false)
            chain.append(sink)
        case .samples(let handler):
            let caps = try Self.make("capsfilter", "output-caps", in: pipeline)
            caps.set(
                "caps",
                parsing: "audio/x-raw,format=\(AppSource.nativeFloatFormat),rate=48000,channels=1,layout=interleaved"
            )
            let sink = try Self.make("appsink", "output", in: pipeline)
            sink.set("async", false)
            // Synchronised like a speaker: each buffer comes out when it is due, pipeline latency included.
            sink.configureAppSink(caps: nil, sync: true) { sample in
                let renderedAt = ContinuousClock.now
                if let samples = sample.floats() { handler.handle(samples, renderedAt) }
                return .ok
            }
            chain += [caps, sink]
        }
        try Self.link(chain, in: pipeline)
        // First decoded buffer → `.flowing`.
        chain[1].staticPad("src")?.addProbe(.buffers) { [self] _ in
            state.withLock { state in
                state.decodedAudio = true
                _ = markFlowing(&state)
            }
            return .remove
        }
        if let sinkForEOS { watchEndOfRecording(at: sinkForEOS) }
        for element in chain.reversed() { element.syncStateWithParent() }
        guard let head = chain[0].staticPad("sink") else {
            throw MediaError(code: .pipelineFailed, message: "the Opus depayloader has no sink pad")
        }
        guard pad.link(to: head) else {
            throw MediaError(code: .pipelineFailed, message: "GStreamer could not link webrtcbin to the Opus decoder")
        }
        if sinkForEOS != nil {
            let feed = RecordingFeed(source: pad, branch: head)
            state.withLock { $0.recording.feeds.append(feed) }
        }
    }

    /// Wakes the run loop (it polls the bus).
    func wake() {
        pipeline.bus.post(application: Self.wakeMessageName)
    }

    /// Waits up to `milliseconds` for a bus message and drops it (the run loop has stopped reading the bus).
    func waitForBusMessage(milliseconds: Int) {
        _ = pipeline.bus.pop(timeout: .milliseconds(milliseconds))
    }
}
