/// The per-frame decision logic of ``SoundDetector``: turns a sequence of 20 ms frame levels into noise events.
///
/// Rules, applied to frame `f` with level `L`:
/// 1. `L >= threshold` extends the loud streak (and its peak); otherwise the streak and its peak reset to 0.
/// 2. If the streak is at least `requiredFrames` long and no event fired in the last `cooldownFrames` frames
///    (`f − lastEventFrame >= cooldownFrames`), an event fires at the end of frame `f`.
///
/// The streak is **not** reset by an event or by the cooldown: a continuous loud sound fires at the end of the
/// minimum duration and then once per cooldown period (at exactly `cooldown` after the previous event), and a
/// streak that started during the cooldown and is already long enough fires on the first frame after the
/// cooldown ends. With a cooldown of 0 every frame of a long-enough streak fires.
struct NoiseEventGate: Sendable, Hashable {
    /// Level a frame needs to count as loud.
    private(set) var threshold: Int
    /// Loud frames needed before an event may fire (`ceil(minDurationMs / 20)`, at least 1).
    private(set) var requiredFrames: Int
    /// Frames that must elapse between two events.
    private(set) var cooldownFrames: Int64
    /// Length of the current loud streak in frames.
    private(set) var loudFrames = 0
    /// Highest level in the current loud streak (0 when there is none).
    private(set) var streakPeak = 0
    /// Index of the frame that fired the last event, if any.
    private(set) var lastEventFrame: Int64?

    /// Creates a gate with no streak and no previous event.
    ///
    /// - Parameter configuration: Detection parameters; out-of-range values are clamped.
    init(configuration: SoundDetectorConfiguration) {
        threshold = 0
        requiredFrames = 1
        cooldownFrames = 0
        apply(configuration)
    }

    /// Adopts new parameters, keeping the current streak, its peak and the time of the last event.
    ///
    /// - Parameter configuration: Detection parameters; out-of-range values are clamped.
    mutating func apply(_ configuration: SoundDetectorConfiguration) {
        let valid = configuration.clamped()
        let frameMs = SoundDetector.frameDurationMs
        threshold = valid.threshold
        requiredFrames = max(1, (valid.minDurationMs + frameMs - 1) / frameMs)
        cooldownFrames = Int64(valid.cooldownSeconds) * Int64(1000 / frameMs)
    }

    /// Whether frame `frameIndex` would still be inside the cooldown of the last event.
    ///
    /// - Parameter frameIndex: Index of a frame at or after the last event.
    /// - Returns: `true` if an event at `frameIndex` would be suppressed.
    func isCoolingDown(atFrame frameIndex: Int64) -> Bool {
        guard let lastEventFrame else { return false }
        return frameIndex - lastEventFrame < cooldownFrames
    }

    /// Feeds one frame level.
    ///
    /// - Parameters:
    ///   - level: The frame's level, 0...100.
    ///   - frameIndex: The frame's index since the stream start (strictly increasing).
    /// - Returns: The event fired by this frame, if any.
    mutating func consume(level: Int, frameIndex: Int64) -> NoiseDetection? {
        if level >= threshold {
            loudFrames += 1
            streakPeak = max(streakPeak, level)
        } else {
            loudFrames = 0
            streakPeak = 0
        }
        guard loudFrames >= requiredFrames, !isCoolingDown(atFrame: frameIndex) else { return nil }
        lastEventFrame = frameIndex
        let frameMs = SoundDetector.frameDurationMs
        return NoiseDetection(
            offsetMs: (frameIndex + 1) * Int64(frameMs),
            peakLevel: streakPeak,
            durationMs: loudFrames * frameMs
        )
    }

    /// Forgets the streak and the last event.
    mutating func reset() {
        loudFrames = 0
        streakPeak = 0
        lastEventFrame = nil
    }
}
