/// One noise event: a loud streak reached the configured minimum duration outside the cooldown.
///
/// Times are derived from the number of samples processed, never from a clock: the caller maps
/// ``offsetMs`` to wall time by adding it to the moment the stream started.
public struct NoiseDetection: Sendable, Hashable {
    /// End of the triggering 20 ms frame, in milliseconds since the first sample of the stream.
    ///
    /// For a streak that starts at a frame boundary this is exactly `streak start + minDuration`.
    public var offsetMs: Int64
    /// The highest frame level (0...100) in the loud streak up to and including the triggering frame.
    public var peakLevel: Int
    /// Length of the loud streak when the event fired, in milliseconds (a multiple of 20).
    ///
    /// Equals the minimum duration for the first event of a streak; a streak that outlasts the cooldown
    /// fires again with a longer duration (see ``SoundDetector``).
    public var durationMs: Int

    /// Creates an event.
    ///
    /// - Parameters:
    ///   - offsetMs: End of the triggering frame in milliseconds since the stream start.
    ///   - peakLevel: Highest level of the streak, 0...100.
    ///   - durationMs: Length of the streak at trigger time in milliseconds.
    public init(offsetMs: Int64, peakLevel: Int, durationMs: Int) {
        self.offsetMs = offsetMs
        self.peakLevel = peakLevel
        self.durationMs = durationMs
    }
}
