import AudioCapture
public import Foundation
import GStreamer
import Synchronization
public import ToukanCore

/// Records one audio input to an AAC-LC .m4a that survives a crash: a fragmented MP4 written fragment by fragment
/// (500 ms by default) with synchronous writes, so `kill -9`, a power cut or a full disk lose at most the last
/// fragment, and ``recover(_:to:)`` turns what is left into a normal .m4a.
///
/// ```swift
/// let recorder = try ToukanRecorder(source: RecordingSource(parsing: "pulse"), output: file)
/// let events = recorder.events()                  // started, paused, resumed (a Gap), failed, finished
/// let levels = recorder.levels()                  // peak/RMS dBFS, five a second
/// try await recorder.start()                      // returns once the first audio is written
/// …  recorder.elapsed  …
/// let summary = try await recorder.stop()         // EOS: the file is finalised; duration and gaps
/// ```
///
/// - A lost input (the device unplugged, the sound server restarted) pauses the recording: ``RecorderEvent/paused(at:reason:)``.
///   The input is opened again every ``RecorderConfiguration/retryInterval``; when audio flows again it continues
///   the same file right after the audio before the loss, and ``RecorderEvent/resumed(_:)`` gives the ``Gap``
///   (where, how long, why) for the service to keep as a marker. No silence is written for the lost time.
/// - A failure of the output (disk full, file unwritable) ends the recording with ``RecorderEvent/failed(_:)``;
///   the file keeps every complete fragment.
/// - One recording per object. Call ``stop()`` to finalise; a recorder that is never stopped keeps recording.
public final class ToukanRecorder: Sendable {
    /// Where a recording is in its life.
    public enum State: Sendable, Hashable {
        case idle, starting, recording, paused, stopping, stopped, failed
    }

    typealias InputOpener = @Sendable () throws(RecorderError) -> any AudioInput

    private struct OpenGap {
        var offset: Duration
        var since: ContinuousClock.Instant
        var reason: String
    }

    private struct Shared {
        var state = State.idle
        var encoder: EncoderPipeline?
        var supervisor: Task<Void, Never>?
        var rate = 1
        var samples: Int64 = 0
        var meter = LevelMeter(interval: 1)
        var gaps: [Gap] = []
        var openGap: OpenGap?
        var lastAudioAt: ContinuousClock.Instant?
        var failure: RecorderError?
        var startWaiter: CheckedContinuation<RecorderError?, Never>?
        var nextSubscriber = 0
        var events: [Int: AsyncStream<RecorderEvent>.Continuation] = [:]
        var levels: [Int: AsyncStream<AudioLevel>.Continuation] = [:]

        func position(_ samples: Int64) -> Duration {
            .nanoseconds(samples * 1_000_000_000 / Int64(rate))
        }

        func emit(_ event: RecorderEvent) {
            for continuation in events.values { continuation.yield(event) }
        }

        /// The last event; returns the subscribers' streams for ``Subscribers/finish()`` outside the lock (ending a
        /// stream calls its `onTermination`, which takes the lock).
        mutating func last(_ event: RecorderEvent) -> Subscribers {
            emit(event)
            defer {
                events = [:]
                levels = [:]
            }
            return Subscribers(events: Array(events.values), levels: Array(levels.values))
        }
    }

    /// Streams to end once the lock is released.
    private struct Subscribers {
        var events: [AsyncStream<RecorderEvent>.Continuation] = []
        var levels: [AsyncStream<AudioLevel>.Continuation] = []

        func finish() {
            for continuation in events { continuation.finish() }
            for continuation in levels { continuation.finish() }
        }
    }

    /// What is recorded.
    public let source: RecordingSource
    /// The .m4a being written.
    public let output: URL
    public let configuration: RecorderConfiguration
    private let openInput: InputOpener
    private let shared = Mutex(Shared())

    /// Creates a recorder; nothing runs until ``start()``.
    ///
    /// - Throws: ``RecorderError/Code/missingDependency`` naming the Debian package of a missing GStreamer element.
    public convenience init(
        source: RecordingSource,
        output: URL,
        configuration: RecorderConfiguration = .default
    ) throws(RecorderError) {
        do {
            try GStreamer.requireElements(EncoderPipeline.elements)
        } catch {
            throw RecorderError(error)
        }
        let directory = configuration.signalDirectory
        self.init(source: source, output: output, configuration: configuration) { () throws(RecorderError) in
            try Self.open(source, signalDirectory: directory)
        }
    }

    /// A recorder whose input comes from `openInput` (called again after each loss), for tests.
    init(
        source: RecordingSource,
        output: URL,
        configuration: RecorderConfiguration,
        openInput: @escaping InputOpener
    ) {
        self.source = source
        self.output = output
        self.configuration = configuration
        self.openInput = openInput
    }

    /// Opens the input of `source`, rendering a test signal first if needed (blocks: call on a thread of its own).
    private static func open(_ source: RecordingSource, signalDirectory: URL) throws(RecorderError) -> any AudioInput {
        do {
            switch source {
            case .input(let spec):
                return try AudioInputs.open(spec)
            case .tone, .speech:
                let file = try SignalFiles.file(for: source, in: signalDirectory)
                return try GStreamerAudioCapture(source: .file(path: file?.path ?? ""))
            }
        } catch let error as AudioCaptureError {
            throw RecorderError(error)
        } catch let error as RecorderError {
            throw error
        } catch {
            throw RecorderError(code: .inputUnavailable, message: "cannot open \(source): \(error)")
        }
    }

    // MARK: - What the service reads

    /// Where the recording is in its life.
    public var state: State { shared.withLock { $0.state } }

    /// The audio recorded so far (lost input time not included).
    public var elapsed: Duration { shared.withLock { $0.position($0.samples) } }

    /// The gaps closed so far, in order.
    public var gaps: [Gap] { shared.withLock { $0.gaps } }

    /// What happens to the recording from now on, ending with ``RecorderEvent/finished(_:)`` or
    /// ``RecorderEvent/failed(_:)``. Subscribe before ``start()`` to see ``RecorderEvent/started(file:)``.
    public func events() -> AsyncStream<RecorderEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: RecorderEvent.self)
        subscribe(continuation, to: \.events)
        return stream
    }

    /// The level of the audio being recorded, one per ``RecorderConfiguration/levelInterval`` (a slow reader gets
    /// the newest few).
    public func levels() -> AsyncStream<AudioLevel> {
        let (stream, continuation) = AsyncStream.makeStream(of: AudioLevel.self, bufferingPolicy: .bufferingNewest(4))
        subscribe(continuation, to: \.levels)
        return stream
    }

    private func subscribe<Element>(
        _ continuation: AsyncStream<Element>.Continuation,
        to list: any WritableKeyPath<Shared, [Int: AsyncStream<Element>.Continuation]> & Sendable
    ) {
        let id: Int? = shared.withLock { shared in
            guard ![.stopped, .failed].contains(shared.state) else { return nil }
            defer { shared.nextSubscriber += 1 }
            shared[keyPath: list][shared.nextSubscriber] = continuation
            return shared.nextSubscriber
        }
        guard let id else {
            continuation.finish()
            return
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.shared.withLock { $0[keyPath: list].removeValue(forKey: id) }
        }
    }

    // MARK: - Start and stop

    /// Opens the input and the file, and returns once the first audio is written.
    ///
    /// - Throws: ``RecorderError``: ``RecorderError/Code/outputExists`` (a recording is never overwritten),
    ///   ``RecorderError/Code/inputUnavailable`` (the input failed before any audio, with the capture's advice),
    ///   ``RecorderError/Code/noAudio`` (nothing within ``RecorderConfiguration/startTimeout``),
    ///   ``RecorderError/Code/outputUnwritable``, ``RecorderError/Code/missingDependency``,
    ///   ``RecorderError/Code/alreadyStarted``. A recorder whose start failed cannot be started again, and leaves
    ///   no file behind.
    public func start() async throws(RecorderError) {
        let isIdle = shared.withLock { shared in
            defer { if shared.state == .idle { shared.state = .starting } }
            return shared.state == .idle
        }
        guard isIdle else {
            throw RecorderError(code: .alreadyStarted, message: "this recorder was already started: create a new one")
        }
        do throws(RecorderError) {
            try await launch()
        } catch {
            await abandonStart(error)
            throw error
        }
    }

    private func launch() async throws(RecorderError) {
        guard !FileManager.default.fileExists(atPath: output.path) else {
            throw RecorderError(
                code: .outputExists,
                message: "\(output.path) exists already: a recording is never overwritten; choose another name"
            )
        }
        let openInput = openInput
        let input = try await Self.offThePool { () throws(RecorderError) in try openInput() }
        guard let feed = input.liveFeed else {
            throw RecorderError(code: .inputUnavailable, message: "the input \(source) cannot share its audio")
        }
        let encoder: EncoderPipeline
        do {
            encoder = try EncoderPipeline(output: output, inputRate: feed.sampleRate, configuration: configuration)
        } catch {
            throw RecorderError(error)
        }
        guard FileManager.default.createFile(atPath: output.path, contents: nil, attributes: [.posixPermissions: 0o600])
        else {
            throw RecorderError(
                code: .outputUnwritable,
                message: "cannot create \(output.path): check that its directory exists and is writable"
            )
        }
        let levelInterval = Int(Double(feed.sampleRate) * (configuration.levelInterval / .seconds(1)))
        shared.withLock { shared in
            shared.encoder = encoder
            shared.rate = feed.sampleRate
            shared.meter = LevelMeter(interval: levelInterval)
        }
        encoder.start()
        Task { [self] in encoderEnded(await encoder.finished()) }
        let supervisor = Task { [self] in await supervise(first: input) }
        shared.withLock { $0.supervisor = supervisor }
        let timeout = configuration.startTimeout
        let timer = Task { [self] in
            guard (try? await Task.sleep(for: timeout)) != nil else { return }
            resolveStart(
                RecorderError(
                    code: .noAudio,
                    message: "\(source) delivered no audio within \(timeout): check the input, or try another "
                        + "--audio-source"
                )
            )
        }
        defer { timer.cancel() }
        let failure = await withCheckedContinuation { (waiter: CheckedContinuation<RecorderError?, Never>) in
            let settled: RecorderError?? = shared.withLock { shared in
                switch shared.state {
                case .starting:
                    shared.startWaiter = waiter
                    return nil
                case .failed: return .some(shared.failure)
                default: return .some(nil)
                }
            }
            if let settled { waiter.resume(returning: settled) }
        }
        if let failure { throw failure }
    }

    /// Resolves a pending ``start()`` (the first call wins).
    private func resolveStart(_ failure: RecorderError?) {
        let waiter = shared.withLock { shared in
            defer { shared.startWaiter = nil }
            return shared.startWaiter
        }
        waiter?.resume(returning: failure)
    }

    /// Stops whatever a failed start began, removes the file (it holds no audio) and marks the recorder failed.
    private func abandonStart(_ error: RecorderError) async {
        let (encoder, supervisor, subscribers) = shared.withLock { shared in
            shared.state = .failed
            shared.failure = error
            return (shared.encoder, shared.supervisor, shared.last(.failed(error)))
        }
        subscribers.finish()
        supervisor?.cancel()
        await supervisor?.value
        encoder?.abort()
        _ = await encoder?.finished()
        if encoder != nil { try? FileManager.default.removeItem(at: output) }
    }

    /// Stops the input, ends the stream and waits until the file is finalised.
    ///
    /// A gap still open (the input was lost and never came back) is closed at the stop and kept.
    /// - Returns: The file, its audio duration and its gaps.
    /// - Throws: ``RecorderError/Code/notRecording`` if the recorder is not recording or paused; the recording's
    ///   failure if it failed; ``RecorderError/Code/encodingFailed`` if the file could not be finalised.
    public func stop() async throws(RecorderError) -> RecordingSummary {
        let stopping: Result<(EncoderPipeline?, Task<Void, Never>?), RecorderError> = shared.withLock { shared in
            switch shared.state {
            case .recording, .paused:
                shared.state = .stopping
                if let open = shared.openGap {
                    shared.gaps.append(Gap(open.offset, length: .now - open.since, reason: open.reason))
                    shared.openGap = nil
                }
                return .success((shared.encoder, shared.supervisor))
            case .failed:
                return .failure(
                    shared.failure ?? RecorderError(code: .encodingFailed, message: "the recording failed"))
            default:
                return .failure(
                    RecorderError(code: .notRecording, message: "this recorder is not recording (\(shared.state))"))
            }
        }
        let (encoder, supervisor) = try stopping.get()
        supervisor?.cancel()
        await supervisor?.value
        encoder?.finish()
        let failure = await encoder?.finished()
        let (outcome, subscribers) = shared.withLock { shared in
            if let failure {
                let error = RecorderError(failure, writing: output)
                shared.state = .failed
                shared.failure = error
                return (Result<RecordingSummary, RecorderError>.failure(error), shared.last(.failed(error)))
            }
            let summary = RecordingSummary(file: output, duration: shared.position(shared.samples), gaps: shared.gaps)
            shared.state = .stopped
            return (.success(summary), shared.last(.finished(summary)))
        }
        subscribers.finish()
        return try outcome.get()
    }

    /// The encoder's thread ended: a failure while recording ends the recording.
    private func encoderEnded(_ failure: GStreamerFailure?) {
        guard let failure else { return }
        let error = RecorderError(failure, writing: output)
        let (supervisor, subscribers) = shared.withLock { shared -> (Task<Void, Never>?, Subscribers) in
            guard [.starting, .recording, .paused].contains(shared.state) else { return (nil, Subscribers()) }
            shared.failure = error
            if shared.state == .starting {
                // start() reports it (and cleans up).
                return (nil, Subscribers())
            }
            shared.state = .failed
            return (shared.supervisor, shared.last(.failed(error)))
        }
        subscribers.finish()
        supervisor?.cancel()
        resolveStart(error)
    }

    // MARK: - The input

    /// Runs inputs until cancelled: each loss pauses the recording, then the input is reopened every
    /// ``RecorderConfiguration/retryInterval``.
    private func supervise(first: any AudioInput) async {
        var input: (any AudioInput)? = first
        while !Task.isCancelled {
            if let current = input {
                guard let loss = await run(current), !Task.isCancelled else { return }
                guard inputLost(loss) else { return }
            }
            input = nil
            guard (try? await Task.sleep(for: configuration.retryInterval)) != nil else { return }
            let openInput = openInput
            input = try? await Self.offThePool { () throws(RecorderError) in try openInput() }
        }
    }

    /// Feeds one input into the recording until it fails or ends (its error) or the task is cancelled (nil).
    private func run(_ input: any AudioInput) async -> RecorderError? {
        let subscription = input.liveFeed?.subscribe { [weak self] frame in self?.receive(frame) }
        var loss = RecorderError(code: .inputUnavailable, message: "the input \(source) stopped delivering audio")
        do {
            for try await _ in input.chunks() {}
        } catch let error as AudioCaptureError {
            loss = RecorderError(error)
        } catch {
            loss = RecorderError(code: .inputUnavailable, message: "the input \(source) failed: \(error)")
        }
        subscription?.cancel()
        await input.stop()
        return Task.isCancelled ? nil : loss
    }

    /// The input failed: pauses a recording (true: try again), or fails a start that has no audio yet (false).
    private func inputLost(_ loss: RecorderError) -> Bool {
        let retry = shared.withLock { shared in
            switch shared.state {
            case .starting:
                return false
            case .recording:
                shared.state = .paused
                let offset = shared.position(shared.samples)
                shared.openGap = OpenGap(offset: offset, since: shared.lastAudioAt ?? .now, reason: loss.message)
                shared.emit(.paused(at: offset, reason: loss.message))
                return true
            default:
                return true
            }
        }
        if !retry { resolveStart(loss) }
        return retry
    }

    /// One captured frame (on the input's thread): into the encoder at its place in the recording, into the meter.
    private func receive(_ frame: LiveAudioFeed.Frame) {
        guard !frame.samples.isEmpty else { return }
        let started = shared.withLock { shared in
            guard [.starting, .recording, .paused].contains(shared.state), let encoder = shared.encoder else {
                return false
            }
            let first = shared.samples
            let position = shared.position(first)
            shared.samples += Int64(frame.samples.count)
            encoder.push(frame.samples, at: position, duration: shared.position(shared.samples) - position)
            let frameDuration = shared.position(Int64(frame.samples.count))
            shared.lastAudioAt = frame.capturedAt
            let wasStarting = shared.state == .starting
            if wasStarting {
                shared.emit(.started(file: output))
            } else if let open = shared.openGap {
                let length = max(.zero, frame.capturedAt - frameDuration - open.since)
                let gap = Gap(open.offset, length: length, reason: open.reason)
                shared.gaps.append(gap)
                shared.openGap = nil
                shared.emit(.resumed(gap))
            }
            shared.state = .recording
            for level in shared.meter.add(frame.samples, firstIndex: first) {
                let reading = AudioLevel(
                    peakDecibels: level.peakDecibels, rmsDecibels: level.rmsDecibels,
                    position: shared.position(level.end))
                for continuation in shared.levels.values { continuation.yield(reading) }
            }
            return wasStarting
        }
        if started { resolveStart(nil) }
    }

    /// Runs blocking work (opening an input may render a WAV or wait for a device; a remux plays a file to its end)
    /// off the concurrency pool, on the process's ``PipelineRunner``.
    static func offThePool<Value: Sendable>(
        _ body: @escaping @Sendable () throws(RecorderError) -> Value
    ) async throws(RecorderError) -> Value {
        try await PipelineRunner.shared.run(body)
    }
}

extension Gap {
    /// A gap at `offset` into the recording, `length` long.
    init(_ offset: Duration, length: Duration, reason: String) {
        self.init(start: offset.seconds, length: length.seconds, reason: reason)
    }
}

extension Duration {
    /// The duration in seconds.
    var seconds: TimeInterval {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
