import Foundation
import GStreamer
import Synchronization

/// One run of a capture pipeline:
/// `<source> ! audioconvert ! audioresample ! audio/x-raw,format=F32,rate=48000,channels=1 ! tee`, then
/// `tee. ! queue ! audioresample ! appsink caps=…rate=16000` (sound detection, in chunks) and `tee. ! queue ! appsink` (the
/// ``LiveAudioFeed`` for live streams, buffer by buffer), where `<source>` is `autoaudiosrc`, `pulsesrc`, `alsasrc` or `filesrc ! decodebin`. The elements are created
/// with `gst_element_factory_make` and configured through properties, so no user text is ever parsed as pipeline
/// syntax.
///
/// Threads and ownership:
/// - Every stored property is a `let`. The ``Pipeline`` (the GStreamer adapter) owns the elements.
/// - `init` builds the elements on the caller's thread (pipeline in NULL: nothing runs yet) and installs the
///   callbacks, which capture `self`; GLib releases them when their element is finalised. That happens inside
///   ``run()``, which always ends with ``Pipeline/tearDown()``; so the cycle pipeline → callbacks → `self` lives
///   exactly as long as the run.
/// - ``run()`` executes on the capture's own thread (started by ``start()``). It alone changes states, seeks,
///   reads the bus and tears down; after it returns no code touches `pipeline` again.
/// - Streaming threads run the callbacks. They touch only `sink` (a `Mutex`), `statistics` (atomics), the
///   continuation (thread-safe) and thread-safe GStreamer calls (link a pad, post on the bus).
/// - ``requestStop()`` may be called from any thread: it sets an atomic and posts a wake-up message on the bus,
///   which outlives the teardown.
final class CapturePipeline: Sendable {
    /// Shared with ``GStreamerAudioCapture``.
    final class Statistics: Sendable {
        /// Chunks dropped because the consumer fell more than `maxBufferedChunks` behind.
        let droppedChunks = Atomic<Int>(0)
        /// Set when the GstPipeline object is finalised (every element released).
        let pipelineFinalized = Atomic<Bool>(false)
        /// Set when the ``CapturePipeline`` object is deinitialised (every callback was released).
        let pipelineObjectReleased = Atomic<Bool>(false)

        init() {}
    }

    /// State touched by the streaming threads.
    private struct SinkState {
        var accumulator: ChunkAccumulator
        /// Whether a decodebin audio pad has been linked (file sources).
        var linkedAudio = false
    }

    private static let stopMessageName = "cribcall-audio-capture-stop"
    private static let noAudioStreamMessageName = "cribcall-audio-capture-no-audio-stream"
    /// The child `autoaudiosrc` creates (an `audiotestsrc` playing silence) when no real input works.
    private static let autoFallbackChildName = "fake-auto-audio-src"
    let source: AudioSourceSpec
    private let pipeline: Pipeline
    private let sourceElement: Element
    private let continuation: AsyncThrowingStream<[Float], any Error>.Continuation
    private let feed: LiveAudioFeed
    private let statistics: Statistics
    private let sink: Mutex<SinkState>
    private let stopRequested = Atomic<Bool>(false)
    private let onExit: @Sendable () -> Void

    /// Builds the pipeline (in NULL state) and installs its callbacks. Call ``start()`` right after.
    ///
    /// - Parameters:
    ///   - source: A GStreamer source (not `.test`).
    ///   - configuration: Chunk size.
    ///   - continuation: Receives the chunks; finished with the outcome when the run ends.
    ///   - feed: Receives every captured buffer at ``feedSampleRate``.
    ///   - statistics: Counters shared with the capture.
    ///   - onExit: Called on the capture thread after the pipeline has been released.
    /// - Throws: ``AudioCaptureError`` if GStreamer or an element is missing.
    init(
        source: AudioSourceSpec,
        configuration: AudioCaptureConfiguration,
        continuation: AsyncThrowingStream<[Float], any Error>.Continuation,
        feed: LiveAudioFeed,
        statistics: Statistics,
        onExit: @escaping @Sendable () -> Void
    ) throws(AudioCaptureError) {
        let elements: Elements
        do {
            elements = try Self.build(source)
        } catch {
            throw AudioCaptureError(error)
        }
        self.source = source
        pipeline = elements.pipeline
        sourceElement = elements.source
        self.continuation = continuation
        self.feed = feed
        self.statistics = statistics
        sink = Mutex(SinkState(accumulator: ChunkAccumulator(chunkSize: configuration.chunkSize)))
        self.onExit = onExit
        installCallbacks(elements)
    }

    deinit {
        statistics.pipelineObjectReleased.store(true, ordering: .releasing)
    }

    /// Starts the capture thread, which runs the pipeline until it fails or ``requestStop()`` is called.
    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "cribcall.audio-capture"
        thread.start()
    }

    /// Asks the capture thread to stop; returns at once. Idempotent, callable from any thread.
    func requestStop() {
        guard !stopRequested.exchange(true, ordering: .acquiringAndReleasing) else { return }
        pipeline.bus.post(application: Self.stopMessageName)
    }

    // MARK: - Building

    private struct Elements {
        var pipeline: Pipeline
        var source: Element
        /// decodebin, for file sources.
        var decoder: Element?
        var convert: Element
        var appsink: Element
        var feedSink: Element
    }

    /// The sample rate of the live feed (Opus's own rate, so streams need no further resampling).
    static let feedSampleRate = 48_000

    /// The element factories a source needs.
    static func requiredElements(for source: AudioSourceSpec) -> [String] {
        let tail = ["audioconvert", "audioresample", "capsfilter", "tee", "queue", "appsink"]
        switch source {
        case .auto: return ["autoaudiosrc"] + tail
        case .pulse: return ["pulsesrc"] + tail
        case .alsa: return ["alsasrc"] + tail
        case .file: return ["filesrc", "decodebin"] + tail
        case .test: return []
        }
    }

    private static func build(_ source: AudioSourceSpec) throws(GStreamerError) -> Elements {
        try GStreamer.requireElements(requiredElements(for: source))
        let pipeline = try Pipeline(name: "cribcall-audio-capture")
        let sourceElement: Element
        var decoder: Element?
        switch source {
        case .auto:
            sourceElement = try pipeline.make("autoaudiosrc", name: "source")
        case .pulse(let device):
            sourceElement = try pipeline.make("pulsesrc", name: "source")
            sourceElement.set("client-name", "CribCall")
            if let device { sourceElement.set("device", device) }
        case .alsa(let device):
            sourceElement = try pipeline.make("alsasrc", name: "source")
            if let device { sourceElement.set("device", device) }
        case .file(let path):
            sourceElement = try pipeline.make("filesrc", name: "source")
            sourceElement.set("location", path)
            decoder = try pipeline.make("decodebin", name: "decoder")
        case .test:
            preconditionFailure("test sources are refused before a pipeline is built")
        }
        let convert = try pipeline.make("audioconvert", name: "convert")
        let resample = try pipeline.make("audioresample", name: "resample")
        let feedCaps = try pipeline.make("capsfilter", name: "feed-caps")
        let tee = try pipeline.make("tee", name: "split")
        let detectionQueue = try pipeline.make("queue", name: "detection-queue")
        let feedQueue = try pipeline.make("queue", name: "feed-queue")
        let detectionResample = try pipeline.make("audioresample", name: "detection-resample")
        let appsink = try pipeline.make("appsink", name: "sink")
        let feedSink = try pipeline.make("appsink", name: "feed-sink")

        if let decoder {
            // decoder → convert is linked when decodebin exposes an audio pad
            try pipeline.link(sourceElement, decoder)
        } else {
            try pipeline.link(sourceElement, convert)
        }
        feedCaps.set(
            "caps",
            parsing: GStreamer.monoFloatCaps(rate: feedSampleRate)
        )
        try pipeline.link([convert, resample, feedCaps, tee])
        // A queue (thread) per branch: a file prerolls each sink, and one sink's preroll must not block the
        // other's first buffer.
        try pipeline.link([tee, detectionQueue, detectionResample, appsink])
        try pipeline.link([tee, feedQueue, feedSink])
        return Elements(
            pipeline: pipeline,
            source: sourceElement,
            decoder: decoder,
            convert: convert,
            appsink: appsink,
            feedSink: feedSink
        )
    }

    // MARK: - Callbacks (streaming threads)

    /// Installs the appsink and decodebin callbacks and the finalisation probe. The callbacks capture `self`;
    /// GLib releases them when their element is finalised.
    private func installCallbacks(_ elements: Elements) {
        var isFile = false
        if case .file = source { isFile = true }
        // A file is paced in real time by the pipeline clock; a live source is paced by its device, and syncing on
        // it would only add latency.
        elements.appsink.configureAppSink(
            caps: GStreamer.monoFloatCaps(rate: GStreamerAudioCapture.sampleRate),
            sync: isFile
        ) { [self] sample in
            accumulate(sample)
        }
        elements.feedSink.configureAppSink(caps: nil, sync: isFile) { [self] sample in
            publish(sample)
        }
        if let decoder = elements.decoder {
            let convertInput = elements.convert.staticPad("sink")
            decoder.onPadAdded { [self] pad in
                decoderAdded(pad, target: convertInput)
            }
            decoder.onNoMorePads { [self] in
                decoderHasNoMorePads()
            }
        }
        let statistics = statistics
        elements.pipeline.onFinalized {
            statistics.pipelineFinalized.store(true, ordering: .releasing)
        }
    }

    /// Adds one appsink sample to the accumulator and yields the completed chunks.
    private func accumulate(_ sample: borrowing Sample) -> FlowResult {
        guard let samples = sample.floats() else { return .ok }
        sink.withLock { state in
            // Yielding under the lock keeps chunk order even if the streaming thread changes (seek, restart).
            for chunk in state.accumulator.append(samples) {
                if case .dropped = continuation.yield(chunk) {
                    statistics.droppedChunks.add(1, ordering: .relaxed)
                }
            }
        }
        return .ok
    }

    /// Publishes one captured buffer on the live feed (copied only when someone subscribes).
    private func publish(_ sample: borrowing Sample) -> FlowResult {
        let capturedAt = ContinuousClock.now
        guard feed.hasSubscribers, let samples = sample.floats() else { return .ok }
        feed.publish(LiveAudioFeed.Frame(samples: samples, capturedAt: capturedAt))
        return .ok
    }

    /// Links decodebin's first audio pad to audioconvert; other streams (video, a second audio track) stay unlinked.
    private func decoderAdded(_ pad: Pad, target: Pad?) {
        guard pad.mediaType?.hasPrefix("audio/") == true, let target, !target.isLinked else { return }
        if pad.link(to: target) {
            sink.withLock { $0.linkedAudio = true }
        }
    }

    /// decodebin exposed all its streams: if none was audio, the file has nothing to capture.
    private func decoderHasNoMorePads() {
        guard !sink.withLock({ $0.linkedAudio }) else { return }
        pipeline.bus.post(application: Self.noAudioStreamMessageName)
    }

    // MARK: - The capture thread

    /// Runs the pipeline until it fails or a stop is requested, then releases it and finishes the stream.
    private func run() {
        let failure = drive()
        // The last reference: finalises every element, which releases the callbacks (and their hold on `self`).
        pipeline.tearDown()
        if let failure {
            continuation.finish(throwing: failure)
        } else {
            continuation.finish()
        }
        onExit()
    }

    /// Brings the pipeline up and handles bus messages; returns the failure, or nil when asked to stop.
    private func drive() -> AudioCaptureError? {
        guard !stopRequested.load(ordering: .acquiring) else { return nil }
        // READY opens devices and files synchronously, so failures show up here, before any sample flows.
        guard pipeline.setState(.ready) else { return failureFromBus() }
        if case .auto = source, sourceElement.containsChild(named: Self.autoFallbackChildName) {
            // autoaudiosrc fell back to its silent test source because no real input opened.
            var reasons: [String] = []
            for warning in pipeline.bus.drainWarnings() where !reasons.contains(warning.reason) {
                reasons.append(warning.reason)
            }
            return .noInputDevice(reasons: reasons)
        }
        let isFile: Bool
        if case .file = source { isFile = true } else { isFile = false }
        // A file prerolls in PAUSED first, then plays; it loops by a flushing seek at its end. Not a non-flushing
        // segment seek at SEGMENT_DONE: that seek waits for the demuxer's streaming thread, which can be blocked
        // pushing into a queue whose sink is re-prerolling — a deadlock seen with short WAV files (wavparse).
        var awaitingPreroll = isFile
        guard pipeline.setState(isFile ? .paused : .playing) else { return failureFromBus() }
        while true {
            if stopRequested.load(ordering: .acquiring) { return nil }
            guard let message = pipeline.bus.pop(timeout: .milliseconds(250)) else { continue }
            switch message.kind {
            case .error(let failure):
                return AudioCaptureError(failure, source: source)
            case .endOfStream:
                // A file loops: its end starts it again; a live input's end is reported.
                guard isFile else { return .inputEnded(source) }
                guard restartFile() else { return .cannotLoop(source) }
            case .asyncDone(fromPipeline: true) where awaitingPreroll:
                awaitingPreroll = false
                guard pipeline.setState(.playing) else { return failureFromBus() }
            case .application(Self.noAudioStreamMessageName):
                if case .file(let path) = source {
                    return .undecodable(path: path, reason: "it contains no audio stream")
                }
            default:
                break
            }
        }
    }

    /// Starts the file again: a flushing seek, or (for a stream that cannot seek) READY → PLAYING.
    private func restartFile() -> Bool {
        if pipeline.seekToStart(flushing: true, segment: false) { return true }
        return pipeline.setState(.ready) && pipeline.setState(.playing)
    }

    /// The error a failed state change posted (it is on the bus already; waits briefly just in case).
    private func failureFromBus() -> AudioCaptureError {
        if let failure = pipeline.bus.popError(timeout: .seconds(1)) {
            return AudioCaptureError(failure, source: source)
        }
        return AudioCaptureError(
            code: .pipelineFailed,
            message: "audio capture from \(source) failed to start: run with GST_DEBUG=3 to see GStreamer's log"
        )
    }
}

extension AudioCaptureError {
    /// A file whose looping seek and restart both failed.
    static func cannotLoop(_ source: AudioSourceSpec) -> AudioCaptureError {
        AudioCaptureError(
            code: .pipelineFailed,
            message: "cannot loop \(source): GStreamer refused to seek back to its start; "
                + "convert the file to WAV or FLAC"
        )
    }

    /// The `test:` sources are generated in-process, not captured.
    static func testSourceNotCaptured(_ source: AudioSourceSpec) -> AudioCaptureError {
        AudioCaptureError(
            code: .unsupportedSource,
            message: "\(source) is generated in-process, not captured through GStreamer: "
                + "use TestAudioSource for it"
        )
    }
}
