import GStreamer
import Synchronization

/// Captures audio through GStreamer and delivers it as 16 kHz mono `Float` chunks in −1...1, ready for
/// `SoundDetector(inputSampleRate: 16_000)`.
///
/// ```swift
/// let capture = try GStreamerAudioCapture(source: AudioSourceSpec(parsing: "alsa:hw:0"))
/// var detector = try SoundDetector(inputSampleRate: GStreamerAudioCapture.sampleRate)
/// for try await chunk in capture.chunks() {      // 1600 samples = 100 ms each
///     for event in detector.process(chunk) { … }
/// }
/// ```
///
/// - A capture runs once: the first ``chunks()`` call starts the pipeline on its own thread.
/// - Live inputs (`auto`, `pulse`, `alsa`) are paced by the device. A file is looped forever without a gap and
///   paced in real time by the pipeline clock.
/// - Failures (no device, missing file, undecodable data, missing plugin) end the stream with an
///   ``AudioCaptureError`` whose message says what to do.
/// - Ending the iteration (break, cancelling the consuming task, dropping the stream), ``stop()`` or releasing the
///   capture stops the pipeline: it goes to NULL and every GStreamer object is released.
/// - A consumer that falls behind by more than ``AudioCaptureConfiguration/maxBufferedChunks`` loses the oldest
///   chunks; ``droppedChunkCount`` counts them.
public final class GStreamerAudioCapture: AudioInput {
    /// The sample rate of the delivered audio, in hertz.
    public static let sampleRate = 16_000

    /// The lifecycle of a capture.
    public enum State: Sendable, Hashable {
        /// ``chunks()`` has not been called yet.
        case idle
        /// The pipeline exists and runs (or is starting).
        case running
        /// The pipeline has been set to NULL and released, or never started.
        case stopped
    }

    /// Where the audio comes from.
    public let source: AudioSourceSpec
    /// Chunk size and buffering.
    public let configuration: AudioCaptureConfiguration

    private enum Phase {
        case idle
        case running(CapturePipeline)
        case stopped
    }

    private struct Lifecycle {
        var phase = Phase.idle
        var stopWaiters: [CheckedContinuation<Void, Never>] = []
    }

    /// The captured audio at 48 kHz, buffer by buffer, for live streams (the same microphone as the chunks).
    public var liveFeed: LiveAudioFeed? { feed }

    private let feed = LiveAudioFeed(sampleRate: CapturePipeline.feedSampleRate)

    private let lifecycle = Mutex(Lifecycle())
    private let statistics = CapturePipeline.Statistics()

    /// Creates a capture; nothing runs until ``chunks()`` is called.
    ///
    /// - Parameters:
    ///   - source: Any source except `.test` (generate those in-process with `TestAudioSource`).
    ///   - configuration: Chunk size and buffering.
    /// - Throws: ``AudioCaptureError`` with code ``AudioCaptureError/Code/unsupportedSource`` for `.test`,
    ///   ``AudioCaptureError/Code/gstreamerUnavailable`` if GStreamer does not initialise, or
    ///   ``AudioCaptureError/Code/missingPlugin`` naming the Debian package to install.
    public init(
        source: AudioSourceSpec,
        configuration: AudioCaptureConfiguration = .default
    ) throws(AudioCaptureError) {
        if case .test = source {
            throw .testSourceNotCaptured(source)
        }
        do {
            try GStreamer.requireElements(CapturePipeline.requiredElements(for: source))
        } catch {
            throw AudioCaptureError(error)
        }
        self.source = source
        self.configuration = configuration
    }

    deinit {
        if case .running(let pipeline) = lifecycle.withLock({ $0.phase }) {
            pipeline.requestStop()
        }
    }

    /// Where the capture is in its lifecycle.
    public var state: State {
        switch lifecycle.withLock({ $0.phase }) {
        case .idle: .idle
        case .running: .running
        case .stopped: .stopped
        }
    }

    /// Chunks dropped so far because the consumer fell too far behind.
    public var droppedChunkCount: Int {
        statistics.droppedChunks.load(ordering: .relaxed)
    }

    /// Whether the GstPipeline has been finalised and the Swift object driving it deinitialised (for tests:
    /// proves the run released every GStreamer object and balanced every `Unmanaged` retain).
    var isFullyReleased: Bool {
        statistics.pipelineFinalized.load(ordering: .acquiring)
            && statistics.pipelineObjectReleased.load(ordering: .acquiring)
    }

    /// Starts the capture and returns its audio: chunks of ``AudioCaptureConfiguration/chunkSize`` samples at
    /// 16 kHz, mono, in −1...1.
    ///
    /// Call it once. The stream throws ``AudioCaptureError`` when capture fails and finishes normally after
    /// ``stop()``. Ending the iteration stops the capture. A second call returns a stream that throws
    /// ``AudioCaptureError/Code/alreadyStarted``.
    ///
    /// - Returns: The single-consumer stream of chunks.
    public func chunks() -> AsyncThrowingStream<[Float], any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(
            of: [Float].self,
            throwing: (any Error).self,
            bufferingPolicy: .bufferingNewest(configuration.maxBufferedChunks)
        )
        let started: Result<CapturePipeline, AudioCaptureError> = lifecycle.withLock { lifecycle in
            guard case .idle = lifecycle.phase else {
                return .failure(
                    AudioCaptureError(
                        code: .alreadyStarted,
                        message: "this capture of \(source) was already started or stopped: create a new one"
                    )
                )
            }
            do throws(AudioCaptureError) {
                let pipeline = try CapturePipeline(
                    source: source,
                    configuration: configuration,
                    continuation: continuation,
                    feed: feed,
                    statistics: statistics,
                    onExit: { [weak self] in self?.pipelineDidExit() }
                )
                lifecycle.phase = .running(pipeline)
                return .success(pipeline)
            } catch {
                lifecycle.phase = .stopped
                return .failure(error)
            }
        }
        switch started {
        case .success(let pipeline):
            // Runs when the consumer stops iterating or drops the stream, and after the pipeline finishes it.
            continuation.onTermination = { _ in pipeline.requestStop() }
            pipeline.start()
        case .failure(let error):
            continuation.finish(throwing: error)
        }
        return stream
    }

    /// Stops the capture and returns once the pipeline is in NULL and released; the stream of chunks finishes.
    /// Idempotent; a capture that never started simply becomes ``State/stopped``.
    public func stop() async {
        let pipeline: CapturePipeline? = lifecycle.withLock { lifecycle in
            switch lifecycle.phase {
            case .idle:
                lifecycle.phase = .stopped
                return nil
            case .running(let pipeline):
                return pipeline
            case .stopped:
                return nil
            }
        }
        guard let pipeline else { return }
        pipeline.requestStop()
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let stopped = lifecycle.withLock { lifecycle in
                guard case .stopped = lifecycle.phase else {
                    lifecycle.stopWaiters.append(waiter)
                    return false
                }
                return true
            }
            if stopped { waiter.resume() }
        }
    }

    /// Called on the capture thread once the pipeline has been released.
    private func pipelineDidExit() {
        let waiters = lifecycle.withLock { lifecycle in
            lifecycle.phase = .stopped
            defer { lifecycle.stopWaiters = [] }
            return lifecycle.stopWaiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
