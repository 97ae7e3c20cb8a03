import CGStreamer
import Foundation
import Synchronization

/// One run of a capture pipeline:
/// `<source> ! audioconvert ! audioresample ! audio/x-raw,format=F32,rate=48000,channels=1 ! tee`, then
/// `tee. ! queue ! audioresample ! appsink caps=…rate=16000` (sound detection, in chunks) and `tee. ! queue ! appsink` (the
/// ``LiveAudioFeed`` for live streams, buffer by buffer), where `<source>` is `autoaudiosrc`, `pulsesrc`, `alsasrc` or `filesrc ! decodebin`. The elements are created
/// with `gst_element_factory_make` and configured through properties, so no user text is ever parsed as pipeline
/// syntax.
///
/// Threads and ownership (why `@unchecked Sendable` is safe):
/// - Every stored property is a `let`. The GStreamer objects behind the pointers are themselves thread-safe,
///   reference-counted objects.
/// - `init` builds the elements on the caller's thread (pipeline in NULL: nothing runs yet) and installs the C
///   callbacks. Each registration holds one `Unmanaged` retain of `self`, released by GLib's destroy notify when
///   the element is finalised. That happens inside ``run()``, which always ends by setting the pipeline to NULL
///   and dropping the only reference to it; so the retain cycle pipeline → callbacks → `self` lives exactly as
///   long as the run.
/// - ``run()`` executes on the capture's own thread (started by ``start()``). It alone changes states, seeks,
///   reads the bus and tears down; after it returns no code touches `pipeline` again.
/// - Streaming threads run the callbacks. They touch only `sink` (a `Mutex`), `statistics` (atomics), the
///   continuation (thread-safe) and thread-safe GStreamer calls (pull a sample, link a pad, post on the bus).
/// - ``requestStop()`` may be called from any thread: it sets an atomic and posts a wake-up message on the bus,
///   for which `self` holds its own reference (released in `deinit`), so it stays valid after the teardown.
final class CapturePipeline: @unchecked Sendable {
    /// Shared with ``GStreamerAudioCapture``.
    final class Statistics: Sendable {
        /// Chunks dropped because the consumer fell more than `maxBufferedChunks` behind.
        let droppedChunks = Atomic<Int>(0)
        /// Set by a GObject weak reference when the GstPipeline object is finalised (every element released).
        let pipelineFinalized = Atomic<Bool>(false)
        /// Set when the ``CapturePipeline`` object is deinitialised (every `Unmanaged` retain was balanced).
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
    /// Samples are read as native floats, so the caps ask for the host's byte order.
    #if _endian(little)
        private static let sampleFormat = "F32LE"
    #else
        private static let sampleFormat = "F32BE"
    #endif

    let source: AudioSourceSpec
    private let pipeline: UnsafeMutablePointer<GstElement>
    private let bus: UnsafeMutablePointer<GstBus>
    private let sourceElement: UnsafeMutablePointer<GstElement>
    private let convert: UnsafeMutablePointer<GstElement>
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
        try GStreamerRuntime.initialize()
        let elements = try Self.build(source)
        self.source = source
        pipeline = elements.pipeline
        bus = gst_element_get_bus(elements.pipeline)
        sourceElement = elements.source
        convert = elements.convert
        self.continuation = continuation
        self.feed = feed
        self.statistics = statistics
        sink = Mutex(SinkState(accumulator: ChunkAccumulator(chunkSize: configuration.chunkSize)))
        self.onExit = onExit
        installCallbacks(elements)
    }

    deinit {
        gst_object_unref(bus)
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
        let structure = gst_structure_new_empty(Self.stopMessageName)
        _ = gst_bus_post(bus, gst_message_new_application(nil, structure))
    }

    // MARK: - Building

    private struct Elements {
        var pipeline: UnsafeMutablePointer<GstElement>
        var source: UnsafeMutablePointer<GstElement>
        /// decodebin, for file sources.
        var decoder: UnsafeMutablePointer<GstElement>?
        var convert: UnsafeMutablePointer<GstElement>
        var appsink: UnsafeMutablePointer<GstElement>
        var feedSink: UnsafeMutablePointer<GstElement>
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

    private static func build(_ source: AudioSourceSpec) throws(AudioCaptureError) -> Elements {
        try GStreamerRuntime.requireElements(requiredElements(for: source))
        guard let pipeline = gst_pipeline_new("cribcall-audio-capture") else {
            throw AudioCaptureError(code: .pipelineFailed, message: "GStreamer could not create a pipeline")
        }
        do throws(AudioCaptureError) {
            /// Creates an element inside the pipeline (which takes its floating reference).
            func make(_ factory: String, _ name: String) throws(AudioCaptureError) -> UnsafeMutablePointer<GstElement> {
                guard let element = gst_element_factory_make(factory, name) else {
                    throw .missingElements([factory])
                }
                guard gst_bin_add(cgst_bin(pipeline), element) != 0 else {
                    throw AudioCaptureError(code: .pipelineFailed, message: "GStreamer could not add \(factory)")
                }
                return element
            }
            func link(
                _ from: UnsafeMutablePointer<GstElement>,
                _ to: UnsafeMutablePointer<GstElement>
            ) throws(AudioCaptureError) {
                guard gst_element_link(from, to) != 0 else {
                    throw AudioCaptureError(
                        code: .pipelineFailed,
                        message: "GStreamer could not link \(String(cString: cgst_object_name(from))) to "
                            + "\(String(cString: cgst_object_name(to)))"
                    )
                }
            }

            let sourceElement: UnsafeMutablePointer<GstElement>
            var decoder: UnsafeMutablePointer<GstElement>?
            switch source {
            case .auto:
                sourceElement = try make("autoaudiosrc", "source")
            case .pulse(let device):
                sourceElement = try make("pulsesrc", "source")
                cgst_object_set_string(sourceElement, "client-name", "CribCall")
                if let device { cgst_object_set_string(sourceElement, "device", device) }
            case .alsa(let device):
                sourceElement = try make("alsasrc", "source")
                if let device { cgst_object_set_string(sourceElement, "device", device) }
            case .file(let path):
                sourceElement = try make("filesrc", "source")
                cgst_object_set_string(sourceElement, "location", path)
                decoder = try make("decodebin", "decoder")
            case .test:
                throw AudioCaptureError.testSourceNotCaptured(source)
            }
            let convert = try make("audioconvert", "convert")
            let resample = try make("audioresample", "resample")
            let feedCaps = try make("capsfilter", "feed-caps")
            let tee = try make("tee", "split")
            let detectionQueue = try make("queue", "detection-queue")
            let feedQueue = try make("queue", "feed-queue")
            let detectionResample = try make("audioresample", "detection-resample")
            let appsink = try make("appsink", "sink")
            let feedSink = try make("appsink", "feed-sink")

            if let decoder {
                try link(sourceElement, decoder)  // decoder → convert is linked when decodebin exposes an audio pad
            } else {
                try link(sourceElement, convert)
            }
            gst_util_set_object_arg(
                UnsafeMutableRawPointer(feedCaps).assumingMemoryBound(to: GObject.self),
                "caps",
                "audio/x-raw,format=\(sampleFormat),rate=\(feedSampleRate),channels=1,layout=interleaved"
            )
            try link(convert, resample)
            try link(resample, feedCaps)
            try link(feedCaps, tee)
            // A queue (thread) per branch: a file prerolls each sink, and one sink's preroll must not block the
            // other's first buffer.
            try link(tee, detectionQueue)
            try link(detectionQueue, detectionResample)
            try link(detectionResample, appsink)
            try link(tee, feedQueue)
            try link(feedQueue, feedSink)

            let caps = gst_caps_from_string(
                "audio/x-raw,format=\(sampleFormat),rate=\(GStreamerAudioCapture.sampleRate),channels=1,"
                    + "layout=interleaved"
            )
            gst_app_sink_set_caps(cgst_app_sink(appsink), caps)
            gst_caps_unref(caps)
            for sink in [appsink, feedSink] {
                // The callback pulls every sample at once; bounding happens in the Swift stream.
                gst_app_sink_set_emit_signals(cgst_app_sink(sink), 0)
                gst_app_sink_set_drop(cgst_app_sink(sink), 0)
                // A file is paced in real time by the pipeline clock; a live source is paced by its device, and
                // syncing on it would only add latency.
                if case .file = source {
                    gst_base_sink_set_sync(cgst_base_sink(sink), 1)
                } else {
                    gst_base_sink_set_sync(cgst_base_sink(sink), 0)
                }
            }
            return Elements(
                pipeline: pipeline,
                source: sourceElement,
                decoder: decoder,
                convert: convert,
                appsink: appsink,
                feedSink: feedSink
            )
        } catch {
            gst_object_unref(pipeline)
            throw error
        }
    }

    // MARK: - Callbacks (streaming threads)

    /// Installs the appsink and decodebin callbacks and the finalisation probe. Each callback registration
    /// retains `self` once; GLib calls the matching destroy notify (releasing it) when the element is finalised.
    private func installCallbacks(_ elements: Elements) {
        var callbacks = GstAppSinkCallbacks()
        callbacks.new_sample = Self.newSample
        gst_app_sink_set_callbacks(
            cgst_app_sink(elements.appsink),
            &callbacks,
            Unmanaged.passRetained(self).toOpaque(),
            Self.releaseDestroyNotify
        )
        var feedCallbacks = GstAppSinkCallbacks()
        feedCallbacks.new_sample = Self.newFeedSample
        gst_app_sink_set_callbacks(
            cgst_app_sink(elements.feedSink),
            &feedCallbacks,
            Unmanaged.passRetained(self).toOpaque(),
            Self.releaseDestroyNotify
        )
        if let decoder = elements.decoder {
            cgst_signal_connect(
                decoder,
                "pad-added",
                unsafeBitCast(Self.padAdded, to: GCallback.self),
                Unmanaged.passRetained(self).toOpaque(),
                Self.releaseClosureNotify
            )
            cgst_signal_connect(
                decoder,
                "no-more-pads",
                unsafeBitCast(Self.noMorePads, to: GCallback.self),
                Unmanaged.passRetained(self).toOpaque(),
                Self.releaseClosureNotify
            )
        }
        g_object_weak_ref(
            UnsafeMutableRawPointer(elements.pipeline).assumingMemoryBound(to: GObject.self),
            Self.pipelineFinalized,
            Unmanaged.passRetained(statistics).toOpaque()
        )
    }

    private static let releaseDestroyNotify: GDestroyNotify = { context in
        guard let context else { return }
        Unmanaged<CapturePipeline>.fromOpaque(context).release()
    }

    private static let releaseClosureNotify: GClosureNotify = { context, _ in
        guard let context else { return }
        Unmanaged<CapturePipeline>.fromOpaque(context).release()
    }

    private static let pipelineFinalized: GWeakNotify = { context, _ in
        guard let context else { return }
        let statistics = Unmanaged<Statistics>.fromOpaque(context).takeRetainedValue()
        statistics.pipelineFinalized.store(true, ordering: .releasing)
    }

    private static let newSample: @convention(c) (UnsafeMutablePointer<GstAppSink>?, gpointer?) -> GstFlowReturn = {
        appsink, context in
        guard let appsink, let context else { return GST_FLOW_ERROR }
        return Unmanaged<CapturePipeline>.fromOpaque(context).takeUnretainedValue().pullSample(from: appsink)
    }

    private static let newFeedSample: @convention(c) (UnsafeMutablePointer<GstAppSink>?, gpointer?) -> GstFlowReturn = {
        appsink, context in
        guard let appsink, let context else { return GST_FLOW_ERROR }
        return Unmanaged<CapturePipeline>.fromOpaque(context).takeUnretainedValue().publishSample(from: appsink)
    }

    /// decodebin's `pad-added`: `void (GstElement *, GstPad *, gpointer)`.
    private static let padAdded:
        @convention(c) (
            UnsafeMutablePointer<GstElement>?, UnsafeMutablePointer<GstPad>?, gpointer?
        ) -> Void = { _, pad, context in
            guard let pad, let context else { return }
            Unmanaged<CapturePipeline>.fromOpaque(context).takeUnretainedValue().decoderAddedPad(pad)
        }

    /// decodebin's `no-more-pads`: `void (GstElement *, gpointer)`.
    private static let noMorePads: @convention(c) (UnsafeMutablePointer<GstElement>?, gpointer?) -> Void = {
        _, context in
        guard let context else { return }
        Unmanaged<CapturePipeline>.fromOpaque(context).takeUnretainedValue().decoderHasNoMorePads()
    }

    /// Copies one appsink sample into the accumulator and yields the completed chunks.
    private func pullSample(from appsink: UnsafeMutablePointer<GstAppSink>) -> GstFlowReturn {
        guard let sample = gst_app_sink_pull_sample(appsink) else { return GST_FLOW_FLUSHING }
        defer { gst_sample_unref(sample) }
        guard let buffer = gst_sample_get_buffer(sample) else { return GST_FLOW_OK }
        var map = GstMapInfo()
        guard gst_buffer_map(buffer, &map, GST_MAP_READ) != 0 else { return GST_FLOW_ERROR }
        defer { gst_buffer_unmap(buffer, &map) }
        let bytes = UnsafeRawBufferPointer(start: map.data, count: Int(map.size))
        sink.withLock { state in
            // Yielding under the lock keeps chunk order even if the streaming thread changes (seek, restart).
            for chunk in state.accumulator.append(nativeFloats: bytes) {
                if case .dropped = continuation.yield(chunk) {
                    statistics.droppedChunks.add(1, ordering: .relaxed)
                }
            }
        }
        return GST_FLOW_OK
    }

    /// Publishes one captured buffer on the live feed (copied only when someone subscribes).
    private func publishSample(from appsink: UnsafeMutablePointer<GstAppSink>) -> GstFlowReturn {
        guard let sample = gst_app_sink_pull_sample(appsink) else { return GST_FLOW_FLUSHING }
        defer { gst_sample_unref(sample) }
        let capturedAt = ContinuousClock.now
        guard feed.hasSubscribers, let buffer = gst_sample_get_buffer(sample) else { return GST_FLOW_OK }
        var map = GstMapInfo()
        guard gst_buffer_map(buffer, &map, GST_MAP_READ) != 0 else { return GST_FLOW_ERROR }
        defer { gst_buffer_unmap(buffer, &map) }
        let bytes = UnsafeRawBufferPointer(start: map.data, count: Int(map.size))
        let count = bytes.count / MemoryLayout<Float>.size
        let samples = (0..<count).map {
            bytes.loadUnaligned(fromByteOffset: $0 * MemoryLayout<Float>.size, as: Float.self)
        }
        feed.publish(LiveAudioFeed.Frame(samples: samples, capturedAt: capturedAt))
        return GST_FLOW_OK
    }

    /// Links decodebin's first audio pad to audioconvert; other streams (video, a second audio track) stay unlinked.
    private func decoderAddedPad(_ pad: UnsafeMutablePointer<GstPad>) {
        guard Self.isAudio(pad), let target = gst_element_get_static_pad(convert, "sink") else { return }
        defer { gst_object_unref(target) }
        guard gst_pad_is_linked(target) == 0 else { return }
        if gst_pad_link(pad, target) == GST_PAD_LINK_OK {
            sink.withLock { $0.linkedAudio = true }
        }
    }

    /// decodebin exposed all its streams: if none was audio, the file has nothing to capture.
    private func decoderHasNoMorePads() {
        guard !sink.withLock({ $0.linkedAudio }) else { return }
        _ = gst_bus_post(bus, gst_message_new_application(nil, gst_structure_new_empty(Self.noAudioStreamMessageName)))
    }

    private static func isAudio(_ pad: UnsafeMutablePointer<GstPad>) -> Bool {
        guard let caps = gst_pad_get_current_caps(pad) ?? gst_pad_query_caps(pad, nil) else { return false }
        defer { gst_caps_unref(caps) }
        guard gst_caps_get_size(caps) > 0, let structure = gst_caps_get_structure(caps, 0) else { return false }
        return String(cString: gst_structure_get_name(structure)).hasPrefix("audio/")
    }

    // MARK: - The capture thread

    /// Runs the pipeline until it fails or a stop is requested, then releases it and finishes the stream.
    private func run() {
        let failure = drive()
        gst_element_set_state(pipeline, GST_STATE_NULL)
        // Drop queued messages: they reference elements (whose callbacks retain `self`), and a pipeline that
        // failed to leave NULL does not flush its bus by itself. Later posts (requestStop) are dropped too.
        gst_bus_set_flushing(bus, 1)
        // The last reference: finalises every element, which releases the callbacks' retains of `self`.
        gst_object_unref(pipeline)
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
        guard gst_element_set_state(pipeline, GST_STATE_READY) != GST_STATE_CHANGE_FAILURE else {
            return failureFromBus()
        }
        if case .auto = source, usesAutoFallback() {
            return .noInputDevice(reasons: drainWarnings())
        }
        let isFile: Bool
        if case .file = source { isFile = true } else { isFile = false }
        // A file prerolls in PAUSED first, so the looping segment seek can be set before it plays.
        var awaitingPreroll = isFile
        guard
            gst_element_set_state(pipeline, isFile ? GST_STATE_PAUSED : GST_STATE_PLAYING)
                != GST_STATE_CHANGE_FAILURE
        else {
            return failureFromBus()
        }
        while true {
            if stopRequested.load(ordering: .acquiring) { return nil }
            guard let message = gst_bus_timed_pop(bus, 250 * cgst_millisecond) else { continue }
            defer { gst_message_unref(message) }
            switch cgst_message_type(message) {
            case GST_MESSAGE_ERROR:
                return AudioCaptureError(GStreamerFailure(message: message), source: source)
            case GST_MESSAGE_EOS:
                // Reached only if the segment seek was refused: restart the file, or report a live input's end.
                guard isFile else { return .inputEnded(source) }
                guard restartFile() else { return .cannotLoop(source) }
            case GST_MESSAGE_SEGMENT_DONE:
                // The end of a looping segment: a non-flushing segment seek continues without a gap.
                guard seekToStart(flushing: false) || restartFile() else { return .cannotLoop(source) }
            case GST_MESSAGE_ASYNC_DONE where awaitingPreroll && cgst_message_src(message) == cgst_object(pipeline):
                awaitingPreroll = false
                // Without a segment (an unseekable stream) the file plays once and EOS restarts it.
                _ = seekToStart(flushing: true)
                guard gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE else {
                    return failureFromBus()
                }
            case GST_MESSAGE_APPLICATION:
                if Self.isApplicationMessage(message, named: Self.noAudioStreamMessageName),
                    case .file(let path) = source
                {
                    return .undecodable(path: path, reason: "it contains no audio stream")
                }
            default:
                break
            }
        }
    }

    /// A seek to the start that plays to the end and posts SEGMENT_DONE instead of EOS.
    private func seekToStart(flushing: Bool) -> Bool {
        var flags = GST_SEEK_FLAG_SEGMENT.rawValue
        if flushing { flags |= GST_SEEK_FLAG_FLUSH.rawValue }
        return gst_element_seek(
            pipeline,
            1.0,
            GST_FORMAT_TIME,
            GstSeekFlags(rawValue: flags),
            GST_SEEK_TYPE_SET,
            0,
            GST_SEEK_TYPE_NONE,
            0
        ) != 0
    }

    /// Starts the file again: a flushing segment seek, or (for a stream that cannot seek) READY → PLAYING.
    private func restartFile() -> Bool {
        if seekToStart(flushing: true) { return true }
        return gst_element_set_state(pipeline, GST_STATE_READY) != GST_STATE_CHANGE_FAILURE
            && gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE
    }

    /// The error a failed state change posted (it is on the bus already; waits briefly just in case).
    private func failureFromBus() -> AudioCaptureError {
        if let message = gst_bus_timed_pop_filtered(bus, cgst_second, GST_MESSAGE_ERROR) {
            defer { gst_message_unref(message) }
            return AudioCaptureError(GStreamerFailure(message: message), source: source)
        }
        return AudioCaptureError(
            code: .pipelineFailed,
            message: "audio capture from \(source) failed to start: run with GST_DEBUG=3 to see GStreamer's log"
        )
    }

    /// Whether `autoaudiosrc` fell back to its silent test source because no real input opened.
    private func usesAutoFallback() -> Bool {
        guard let child = gst_bin_get_by_name(cgst_bin(sourceElement), Self.autoFallbackChildName) else {
            return false
        }
        gst_object_unref(child)
        return true
    }

    /// The reasons of the warnings on the bus (e.g. why `autoaudiosrc` rejected each input).
    private func drainWarnings() -> [String] {
        var reasons: [String] = []
        while let message = gst_bus_pop_filtered(bus, GST_MESSAGE_WARNING) {
            let reason = GStreamerFailure(message: message).reason
            if !reasons.contains(reason) { reasons.append(reason) }
            gst_message_unref(message)
        }
        return reasons
    }

    private static func isApplicationMessage(_ message: UnsafeMutablePointer<GstMessage>, named name: String) -> Bool {
        guard let structure = gst_message_get_structure(message) else { return false }
        return gst_structure_has_name(structure, name) != 0
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
