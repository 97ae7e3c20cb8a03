public import SoundDetection
import Synchronization

/// The built-in test signals (`test:cry`, `test:silence`, PROTOCOL.md §8) as a live input: ``TestAudioSource``
/// samples produced every 20 ms, paced by the clock like a microphone, so a monitor without one behaves exactly as
/// with one: detection gets them in 100 ms chunks, live streams get each 20 ms frame from ``liveFeed``.
public final class TestSignalInput: AudioInput {
    /// The delivered sample rate, as every ``AudioInput``.
    public static let sampleRate = TestAudioSource.sampleRate

    private let kind: TestAudioSource.Kind
    private let chunkSize: Int
    private let producer = Mutex<Task<Void, Never>?>(nil)
    private let feed = LiveAudioFeed(sampleRate: TestAudioSource.sampleRate)

    /// Samples produced per 20 ms tick.
    private static let frameSize = TestAudioSource.sampleRate / 50

    public var liveFeed: LiveAudioFeed? { feed }

    /// - Parameters:
    ///   - kind: Which signal.
    ///   - chunkSize: Samples per chunk (default 1,600 = 100 ms).
    public init(_ kind: TestAudioSource.Kind, chunkSize: Int = AudioCaptureConfiguration.default.chunkSize) {
        precondition(chunkSize > 0, "TestSignalInput: chunkSize must be positive")
        self.kind = kind
        self.chunkSize = chunkSize
    }

    public func chunks() -> AsyncThrowingStream<[Float], any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(
            of: [Float].self, bufferingPolicy: .bufferingNewest(50))
        let kind = kind
        let chunkSize = chunkSize
        let feed = feed
        let task = Task {
            var source = TestAudioSource(kind)
            var accumulator = ChunkAccumulator(chunkSize: chunkSize)
            let clock = ContinuousClock()
            let period = Duration.seconds(Double(Self.frameSize) / Double(Self.sampleRate))
            var deadline = clock.now + period
            while !Task.isCancelled {
                // A frame is delivered once its last sample is "captured", as a microphone would.
                do { try await clock.sleep(until: deadline) } catch { break }
                let frame = source.next(Self.frameSize)
                feed.publish(LiveAudioFeed.Frame(samples: frame, capturedAt: deadline))
                for chunk in accumulator.append(frame) { continuation.yield(chunk) }
                deadline += period
            }
            continuation.finish()
        }
        producer.withLock { previous in
            previous?.cancel()
            previous = task
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    public func stop() async {
        let task = producer.withLock { current in
            defer { current = nil }
            return current
        }
        task?.cancel()
        await task?.value
    }
}

/// Opens the input `--audio-source` names.
public enum AudioInputs {
    /// The input for `spec`: the in-process signal for `test:*`, a GStreamer capture for everything else.
    /// - Throws: ``AudioCaptureError`` when GStreamer or a plugin the source needs is missing.
    public static func open(_ spec: AudioSourceSpec) throws(AudioCaptureError) -> any AudioInput {
        if case .test(let kind) = spec { return TestSignalInput(kind) }
        return try GStreamerAudioCapture(source: spec)
    }
}
