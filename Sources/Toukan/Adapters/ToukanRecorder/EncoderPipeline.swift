import Foundation
import GStreamer
import Synchronization

/// One recording's encoder:
/// `appsrc ! audioconvert ! audioresample ! audio/x-raw,rate=44100,channels=1 ! avenc_aac bitrate=64000
///  ! mp4mux fragment-duration=500 ! filesink o-sync=true buffer-mode=unbuffered`.
///
/// The appsrc takes the input's samples stamped with their place in the recording (not their arrival), so an
/// input lost and found again continues the same timeline: the file never holds invented silence. mp4mux writes a
/// fragmented MP4 (a `moov` header first, then a `moof`+`mdat` pair per fragment) and filesink writes each buffer
/// at once, synchronously: what a crash leaves is a readable file up to the last fragment.
///
/// Threads: built on the caller's thread; ``start()`` starts the encoder's own thread, which alone changes states,
/// reads the bus and tears down. ``push(_:at:duration:)``, ``finish()`` and ``abort()`` may be called from any
/// thread (appsrc is thread-safe; the bus wakes the encoder thread).
final class EncoderPipeline: Sendable {
    /// The element factories an encoder needs.
    static let elements = ["appsrc", "audioconvert", "audioresample", "capsfilter", "avenc_aac", "mp4mux", "filesink"]
    private static let wakeMessage = "recorder-encoder-wake"
    /// How long the muxer may take to write its last fragment and index once the stream ends.
    private static let finishTimeout: Duration = .seconds(30)

    private enum Command: Int {
        case run, finish, abort
    }

    private struct Completion {
        var outcome: GStreamerFailure??
        var waiters: [CheckedContinuation<GStreamerFailure?, Never>] = []
    }

    let output: URL
    private let pipeline: Pipeline
    private let source: AppSource
    private let command = Atomic<Int>(Command.run.rawValue)
    private let completion = Mutex(Completion())

    /// Builds the pipeline (NULL: nothing runs, the file is not opened yet).
    ///
    /// - Parameters:
    ///   - output: The file to write.
    ///   - inputRate: The sample rate of the mono `Float` samples that will be pushed.
    init(output: URL, inputRate: Int, configuration: RecorderConfiguration) throws(GStreamerError) {
        try GStreamer.requireElements(Self.elements)
        let pipeline = try Pipeline(name: "recorder-encoder")
        let appsrc = try pipeline.make("appsrc", name: "input")
        appsrc.set("caps", parsing: GStreamer.monoFloatCaps(rate: inputRate))
        appsrc.set("format", parsing: "time")
        appsrc.set("is-live", false)
        let convert = try pipeline.make("audioconvert", name: "convert")
        let resample = try pipeline.make("audioresample", name: "resample")
        let caps = try pipeline.make("capsfilter", name: "caps")
        caps.set("caps", parsing: "audio/x-raw,rate=\(configuration.sampleRate),channels=1")
        let encoder = try pipeline.make("avenc_aac", name: "encoder")
        encoder.set("bitrate", parsing: "\(configuration.bitrate)")
        let muxer = try pipeline.make("mp4mux", name: "muxer")
        muxer.set("fragment-duration", UInt32(max(1, configuration.fragmentDuration / .milliseconds(1))))
        let sink = try pipeline.make("filesink", name: "sink")
        sink.set("location", output.path)
        sink.set("buffer-mode", parsing: "unbuffered")
        sink.set("o-sync", configuration.durableWrites)
        sink.set("sync", false)
        try pipeline.link([appsrc, convert, resample, caps, encoder, muxer, sink])
        self.output = output
        self.pipeline = pipeline
        source = AppSource(appsrc)
    }

    /// Starts the encoder's thread (PLAYING: the file is opened and its header written).
    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "recorder-encoder"
        thread.start()
    }

    /// Queues samples at their place in the recording.
    func push(_ samples: [Float], at position: Duration, duration: Duration) {
        source.push(samples, presentationTime: position, duration: duration)
    }

    /// Ends the stream: the encoder drains, the muxer writes its last fragment, the file is complete.
    func finish() {
        source.endOfStream()
        command.store(Command.finish.rawValue, ordering: .releasing)
        pipeline.bus.post(application: Self.wakeMessage)
    }

    /// Stops at once, without finalising (for a recording that never started).
    func abort() {
        command.store(Command.abort.rawValue, ordering: .releasing)
        pipeline.bus.post(application: Self.wakeMessage)
    }

    /// Waits until the encoder's thread has released the pipeline: nil if it ended at EOS or was aborted, the
    /// failure if GStreamer reported one.
    func finished() async -> GStreamerFailure? {
        await withCheckedContinuation { waiter in
            let outcome: GStreamerFailure?? = completion.withLock { completion in
                if completion.outcome == nil { completion.waiters.append(waiter) }
                return completion.outcome
            }
            if let outcome { waiter.resume(returning: outcome) }
        }
    }

    // MARK: - The encoder's thread

    private func run() {
        let failure = drive()
        pipeline.tearDown()
        let waiters = completion.withLock { completion in
            completion.outcome = .some(failure)
            defer { completion.waiters = [] }
            return completion.waiters
        }
        for waiter in waiters { waiter.resume(returning: failure) }
    }

    private func drive() -> GStreamerFailure? {
        guard pipeline.setState(.playing) else {
            return pipeline.bus.popError(timeout: .seconds(1))
                ?? GStreamerFailure(domain: .core, code: 0, message: "the encoder refused to start")
        }
        var finishDeadline: ContinuousClock.Instant?
        while true {
            switch Command(rawValue: command.load(ordering: .acquiring)) {
            case .abort: return nil
            case .finish where finishDeadline == nil: finishDeadline = .now + Self.finishTimeout
            default: break
            }
            if let finishDeadline, ContinuousClock.now > finishDeadline {
                return GStreamerFailure(
                    domain: .core, code: 0, message: "the encoder did not finish within \(Self.finishTimeout)")
            }
            guard let message = pipeline.bus.pop(timeout: .milliseconds(250)) else { continue }
            switch message.kind {
            case .error(let failure): return failure
            case .endOfStream: return nil
            default: continue
            }
        }
    }
}
