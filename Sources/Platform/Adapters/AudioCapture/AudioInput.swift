/// A running source of 16 kHz mono audio for the sound detector.
///
/// ``GStreamerAudioCapture`` is the real one; services depend on this protocol so their tests can feed them an
/// in-memory twin (e.g. one that paces ``SoundDetection/TestAudioSource`` samples).
public protocol AudioInput: AnyObject, Sendable {
    /// The audio, as chunks of 16 kHz mono samples in −1...1, for a single consumer.
    ///
    /// The stream throws ``AudioCaptureError`` when the input fails, and finishes normally after ``stop()``.
    /// Ending the iteration (break, task cancellation, dropping the stream) stops the input.
    func chunks() -> AsyncThrowingStream<[Float], any Error>

    /// Stops the input and returns once it has released its resources. Idempotent.
    func stop() async

    /// The same audio for live streams, in small low-latency frames, while the input runs (nil: this input
    /// cannot share its audio). Defaults to nil.
    var liveFeed: LiveAudioFeed? { get }
}

extension AudioInput {
    public var liveFeed: LiveAudioFeed? { nil }
}
