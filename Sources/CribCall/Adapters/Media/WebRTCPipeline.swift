import AudioCapture
import CribCallProtocol
import DeviceIdentity
import Foundation
import GStreamer
import Logging
import SoundDetection
import StreamMedia
import Synchronization
import VideoCapture

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
        case sender(SenderAudio, video: SenderVideo?)
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
        var startWaiter: CheckedContinuation<Result<Void, MediaError>, Never>?
        /// Descriptions, candidates, flowing and the end reason (pure; PeerSignaling.swift).
        var signaling: PeerSignaling
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

    /// Where an `audio_video` sender's video comes from.
    enum SenderVideo: Sendable, CustomStringConvertible {
        /// Its own GStreamer source (the camera or the test pattern).
        case source(GStreamerMediaEngine.VideoSource)
        /// The shared camera: `intervideosrc` on the capture's ``LiveVideoFeed`` channel.
        case feed(LiveVideoFeed)

        var description: String {
            switch self {
            case .source(let source): return "\(source)"
            case .feed: return "the camera the safety detectors watch"
            }
        }
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
    let state: Mutex<State>
    private let stopRequested = Atomic<Bool>(false)
    private let onExit: @Sendable () -> Void
    /// A feed-fed sender's registration with the shared microphone; cancelled first thing in the teardown.
    private let feedSubscription: LiveAudioFeed.Subscription?
    /// A sender's hold on the shared camera's live video (opens its valve); cancelled in the teardown.
    private let videoViewer: LiveVideoFeed.Viewer?
    /// The configuration's logger with this stream's `session` and `role`.
    let logger: Logger

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
        state = Mutex(State(signaling: PeerSignaling(isSender: role.isSender, sessionId: sessionId)))
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
        var logger = configuration.logger
        logger[metadataKey: "session"] = "\(sessionId.prefix(8))"
        logger[metadataKey: "role"] = "\(role.isSender ? "sender" : "receiver")"
        self.logger = logger
        if case .sender(.feed(let feed), _) = role, let source = built.pipeline.element(named: "source") {
            let pusher = AppSource(source)
            feedSubscription = feed.subscribe { frame in pusher.push(frame.samples) }
        } else {
            feedSubscription = nil
        }
        if case .sender(_, .feed(let feed)?) = role {
            videoViewer = feed.watch()
        } else {
            videoViewer = nil
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
        let first = state.withLock { $0.signaling.end(reason) }
        guard first else { return }
        wake()
    }

    /// Runs the pipeline until it ends, then releases it and finishes the events.
    private func run() {
        let reason = drive()
        feedSubscription?.cancel()
        videoViewer?.cancel()
        // NULL, the bus flushed, the last reference dropped: every element is finalised (those we hold a
        // reference to once it is released below), which releases the callbacks and their hold on `self`.
        pipeline.tearDown()
        state.withLock { $0.dtlsDecoders = [] }
        releaseRecording()
        if let reason {
            logger.debug("stream peer ended: \(reason)")
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
        logger.debug("stream peer playing")
        while true {
            if let reason = state.withLock({ $0.signaling.endReason }) {
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

    /// Runs one step of the signaling machine under the lock and yields the event it returns there (the lock keeps
    /// the order of events from different GStreamer threads).
    func signal(_ step: (inout PeerSignaling) -> MediaEvent?) {
        state.withLock { state in
            if let event = step(&state.signaling) { continuation.yield(event) }
        }
    }

    // MARK: - Negotiation

    private func negotiationNeeded() {
        guard state.withLock({ $0.signaling.negotiationNeeded() }) else { return }
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
        signal { $0.localDescriptionCreated(created, published: sdp) }
        if !role.isSender {
            do {
                try webrtc.setLocalDescription(.answer, created)
            } catch {
                end("webrtcbin's own answer could not be read back")
            }
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
        let accepted = state.withLock { state in
            Result { () throws(MediaError) in try state.signaling.acceptRemoteDescription(sdp) }
        }
        if let offer = try accepted.get() {
            // The sender's own offer, set locally just before its answer: ICE gathering starts now.
            do {
                try webrtc.setLocalDescription(.offer, offer)
            } catch {
                throw MediaError(code: .pipelineFailed, message: "webrtcbin's own offer could not be read back")
            }
        } else if !role.isSender {
            try prepareRecording(forOffer: sdp)
        }
        let refusal = await withCheckedContinuation { (waiter: CheckedContinuation<String?, Never>) in
            do throws(GStreamerError) {
                // Without hostname candidates (see addRemoteCandidate): a browser's answer carries its mDNS ones.
                try webrtc.setRemoteDescription(type, SessionDescriptionText.removingHostnameCandidates(from: sdp)) {
                    refusal in waiter.resume(returning: refusal?.reason)
                }
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
        let line = state.withLock { state in
            Result { () throws(MediaError) in try state.signaling.remoteCandidateLine(candidate) }
        }
        let index = try line.get()
        // A candidate named by a hostname (a browser's mDNS name, "<uuid>.local") is left out: webrtcbin would
        // resolve it with getaddrinfo, which asks the unicast DNS server (beyond the LAN) whenever no mDNS resolver
        // is in nsswitch.conf — the privacy capture caught it. ICE connects all the same: the peer's checks reach
        // our host candidates and its address is learnt from them (peer-reflexive).
        if SessionDescriptionText.candidateNamesHost(candidate.candidate) { return }
        // An empty candidate ends the remote candidates (webrtcbin 1.22 treats "" as end-of-candidates).
        webrtc.addICECandidate(mlineIndex: index, candidate.candidate)
    }

    private func localCandidate(mline: Int, _ candidate: String) {
        signal { $0.localCandidate(mline: mline, candidate) }
    }

    // MARK: - Connection state

    private func stateChanged(_ change: WebRTCBin.StateChange) {
        switch change {
        case .iceGatheringComplete:
            logger.debug("ICE gathering complete")
            signal { $0.gatheringComplete() }
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

    /// ICE and DTLS are connected: checks the remote certificate against the remote SDP's fingerprint
    /// (``CertificateCheck``: until every DTLS decoder shows a matching certificate the stream is not connected).
    private func connected(attempt: Int = 0) {
        let (decoders, fingerprints, ended) = state.withLock {
            ($0.dtlsDecoders, $0.signaling.remoteFingerprints, $0.signaling.hasEnded)
        }
        guard !ended else { return }
        let pems = decoders.map { $0.element.string("peer-pem") }
        switch CertificateCheck.judge(peerPEMs: pems, fingerprints: fingerprints, attempt: attempt) {
        case .verified:
            logger.debug("ICE and DTLS connected; the peer's certificate matches its description")
            signal { $0.verifiedConnection() }
        case .refused(let reason):
            end(reason)
        case .retry:
            Task { [self] in
                try? await Task.sleep(for: CertificateCheck.retryInterval)
                connected(attempt: attempt + 1)
            }
        }
    }

    // MARK: - Elements and pads

    /// Sets the device certificate on each DTLS decoder webrtcbin creates (it has no certificate property).
    private func elementAdded(_ element: Element) {
        guard element.factoryName == "dtlssrtpdec" else { return }
        element.set("pem", dtlsPEM)
        let reference = element.retained()
        state.withLock { $0.dtlsDecoders.append(reference) }
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
