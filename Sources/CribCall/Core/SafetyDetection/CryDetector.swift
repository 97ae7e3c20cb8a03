/// Hears crying in the monitor's 16 kHz detection audio, beyond the level gate of noise events: a baby's cry is
/// *voiced* (a clear pitch), *high* (a fundamental of about 250–650 Hz, where adult speech rarely goes),
/// *sustained* (phonations of half a second and more, repeated) and *unsteady* (its pitch glides and wavers from
/// one instant to the next, where an instrument or a fan holds a note).
///
/// The audio is first halved to 8 kHz (a [¼ ½ ¼] low-pass, then every other sample: a cry's pitch is far below
/// 4 kHz). Every 16 ms a 32 ms frame is judged: its level, and its pitch from the normalised autocorrelation over the lags
/// of 200–1000 Hz (the smallest lag near the best peak, so a harmonic is not taken for the fundamental). A frame is
/// a *cry frame* when it is loud enough, voiced (correlation ≥ the sensitivity's threshold) and its pitch is in
/// range. Over the last 4 s, crying is heard when
/// - the cry frames add up to at least the sensitivity's ``Sensitivity/minimumCrySeconds``,
/// - the longest run of them (gaps of up to 2 frames bridged) lasts at least the sensitivity's
///   ``Sensitivity/minimumPhonationSeconds`` (0.5 s at medium: a bark or a spoken syllable does not), and
/// - within it, the loudness does not rise and fall syllable by syllable (at most 2.5 humps a second: speech has
///   four and more), and
/// - their pitch moves from frame to frame by a median of at least 0.8 % (a held note or a hum does not).
///
/// It reports the moment crying starts, then every ``repeatInterval`` while it goes on; the confidence grows with
/// how much of the window is crying and how clearly voiced it is. Measured precision and recall on the generated
/// clip set are in this module's README.
public struct CryDetector: Sendable {
    /// The rate of the audio it is given.
    public static let sampleRate = 16_000
    /// The rate it analyses at.
    static let analysisRate = 8_000
    static let frameLength = 256
    static let hop = 128
    /// Lags searched: 1000 Hz … 200 Hz (wider than the cry range, so a pitch just outside it is seen as such and
    /// not folded into it by a multiple of its period).
    static let lags = (analysisRate / 1000)...(analysisRate / 200)
    /// The pitches of crying.
    static let cryPitch: ClosedRange<Float> = 250...650
    static let windowFrames = 4 * analysisRate / hop
    static let minimumJitter = 0.008
    /// Frames are judged if at least this loud (mean square; about −50 dBFS).
    static let minimumEnergy: Float = 1e-5

    /// How readily crying is heard.
    public enum Sensitivity: String, Sendable, Hashable, CaseIterable {
        case low, medium, high

        /// Least normalised autocorrelation of a voiced frame.
        public var voicing: Float {
            switch self {
            case .low: 0.6
            case .medium: 0.5
            case .high: 0.4
            }
        }

        /// Least length of the longest phonation (a run of cry frames), in seconds: a bark or a spoken syllable
        /// is shorter.
        public var minimumPhonationSeconds: Double {
            switch self {
            case .low: 0.6
            case .medium: 0.5
            case .high: 0.35
            }
        }

        /// Least crying, in seconds, within the 4 s window.
        public var minimumCrySeconds: Double {
            switch self {
            case .low: 1.6
            case .medium: 1.2
            case .high: 0.8
            }
        }
    }

    /// Crying heard: when (seconds of audio since the start) and how sure.
    public struct Detection: Sendable, Hashable {
        public var offset: Double
        public var confidence: Double
    }

    /// How often an ongoing cry is reported again.
    public var repeatInterval = 10.0
    public let sensitivity: Sensitivity

    private struct FrameJudgement {
        var isCry: Bool
        var energy: Float = 0
        var pitch: Float
        var correlation: Float
    }

    private var pending: [Float] = []
    /// The last two 16 kHz samples, and how many have come, for the halving filter across chunks.
    private var history: (Float, Float) = (0, 0)
    private var inputCount = 0
    private var frames: [FrameJudgement] = []
    private var framesSeen = 0
    private var crying = false
    private var lastReport: Double?

    public init(sensitivity: Sensitivity = .medium) {
        self.sensitivity = sensitivity
    }

    /// The name detections carry as their `detector`.
    public static let name = "cry-pitch"

    /// Feeds 16 kHz mono samples (any chunking gives the same detections).
    public mutating func process(_ samples: [Float]) -> [Detection] {
        pending.reserveCapacity(pending.count + samples.count / 2 + 1)
        for sample in samples {
            // The filtered value of the previous sample, kept for every other one.
            if inputCount > 0, (inputCount - 1).isMultiple(of: 2) {
                pending.append(0.25 * history.1 + 0.5 * history.0 + 0.25 * sample)
            }
            history = (sample, history.0)
            inputCount += 1
        }
        var detections: [Detection] = []
        var start = 0
        while pending.count - start >= Self.frameLength {
            let frame = Array(pending[start..<start + Self.frameLength])
            start += Self.hop
            frames.append(judge(frame))
            if frames.count > Self.windowFrames { frames.removeFirst(frames.count - Self.windowFrames) }
            framesSeen += 1
            // A decision every 8 frames (128 ms).
            if framesSeen % 8 == 0, let detection = decide() { detections.append(detection) }
        }
        pending.removeFirst(start)
        return detections
    }

    private func judge(_ frame: [Float]) -> FrameJudgement {
        let mean = frame.reduce(0, +) / Float(frame.count)
        let x = frame.map { $0 - mean }
        let energy = x.reduce(0) { $0 + $1 * $1 } / Float(x.count)
        guard energy >= Self.minimumEnergy else {
            return FrameJudgement(isCry: false, energy: energy, pitch: 0, correlation: 0)
        }
        let span = x.count - Self.lags.upperBound
        // Running sums of squares: each lag's energy term is a difference of two of them.
        var squares = [Float](repeating: 0, count: x.count + 1)
        for index in x.indices { squares[index + 1] = squares[index] + x[index] * x[index] }
        let first = squares[span]
        var correlations: [Float] = []
        correlations.reserveCapacity(Self.lags.count)
        for lag in Self.lags {
            var product: Float = 0
            for index in 0..<span { product += x[index] * x[index + lag] }
            let second = squares[lag + span] - squares[lag]
            correlations.append(first > 0 && second > 0 ? product / (first * second).squareRoot() : 0)
        }
        guard let best = correlations.max(), best > 0 else {
            return FrameJudgement(isCry: false, energy: energy, pitch: 0, correlation: 0)
        }
        // The shortest lag whose peak is nearly as good: the fundamental, not a multiple of its period.
        var chosen = correlations.firstIndex(of: best)!
        for index in correlations.indices where correlations[index] >= 0.9 * best {
            let isPeak =
                (index == 0 || correlations[index] >= correlations[index - 1])
                && (index == correlations.count - 1 || correlations[index] >= correlations[index + 1])
            if isPeak {
                chosen = index
                break
            }
        }
        var lag = Float(Self.lags.lowerBound + chosen)
        if chosen > 0, chosen < correlations.count - 1 {
            // Parabolic refinement between the neighbouring lags.
            let left = correlations[chosen - 1]
            let centre = correlations[chosen]
            let right = correlations[chosen + 1]
            let curvature = left - 2 * centre + right
            if curvature < 0 { lag += 0.5 * (left - right) / curvature }
        }
        let pitch = Float(Self.analysisRate) / lag
        let voiced = correlations[chosen] >= sensitivity.voicing
        // An edge lag is the slope of a peak outside the searched lags, not a pitch.
        let inRange = chosen > 0 && chosen < correlations.count - 1 && Self.cryPitch.contains(pitch)
        return FrameJudgement(
            isCry: voiced && inRange, energy: energy, pitch: pitch, correlation: correlations[chosen])
    }

    /// Loudness dips per second within a phonation, plus one: a cry's envelope rises, holds and falls (about one
    /// a second), speech rises and falls with each syllable (four and more).
    static let maximumSyllableRate = 2.5

    /// Humps of `energies` per second: dips to under a third of the lower of the peaks on either side.
    static func syllableRate(_ energies: [Float], seconds: Double) -> Double {
        guard energies.count > 2, seconds > 0 else { return 0 }
        // Smoothed over 3 frames (48 ms).
        let smooth = energies.indices.map { index in
            let window = energies[max(0, index - 1)...min(energies.count - 1, index + 1)]
            return window.reduce(0, +) / Float(window.count)
        }
        var peakBefore = [Float](repeating: 0, count: smooth.count)
        var peakAfter = [Float](repeating: 0, count: smooth.count)
        var running: Float = 0
        for index in smooth.indices {
            running = max(running, smooth[index])
            peakBefore[index] = running
        }
        running = 0
        for index in smooth.indices.reversed() {
            running = max(running, smooth[index])
            peakAfter[index] = running
        }
        var dips = 0
        var inDip = false
        for index in smooth.indices {
            let deep = smooth[index] < min(peakBefore[index], peakAfter[index]) / 3
            if deep, !inDip { dips += 1 }
            inDip = deep
        }
        return Double(dips + 1) / seconds
    }

    private mutating func decide() -> Detection? {
        let cryFrames = frames.filter(\.isCry)
        let cryTime = Double(cryFrames.count * Self.hop) / Double(Self.analysisRate)
        // The longest phonation: a run of cry frames, gaps of up to 2 frames bridged.
        var longest = 0..<0
        var runStart: Int?
        var gap = 0
        for (index, frame) in frames.enumerated() {
            if frame.isCry {
                let start = runStart ?? index
                runStart = start
                gap = 0
                if index + 1 - start > longest.count { longest = start..<(index + 1) }
            } else if runStart != nil, gap < 2 {
                gap += 1
            } else {
                runStart = nil
                gap = 0
            }
        }
        let phonation = Double(longest.count * Self.hop) / Double(Self.analysisRate)
        var steps: [Float] = []
        for (previous, next) in zip(frames, frames.dropFirst()) where previous.isCry && next.isCry {
            steps.append(abs(next.pitch - previous.pitch) / previous.pitch)
        }
        steps.sort()
        let jitter = steps.isEmpty ? 0 : Double(steps[steps.count / 2])
        let now = Double(framesSeen * Self.hop + Self.frameLength) / Double(Self.analysisRate)
        let heard =
            cryTime >= sensitivity.minimumCrySeconds && phonation >= sensitivity.minimumPhonationSeconds
            && Self.syllableRate(frames[longest].map(\.energy), seconds: phonation) <= Self.maximumSyllableRate
            && jitter >= Self.minimumJitter
        defer { crying = heard }
        guard heard else { return nil }
        if crying, let lastReport, now - lastReport < repeatInterval { return nil }
        lastReport = now
        let clarity = Double(cryFrames.map(\.correlation).reduce(0, +)) / Double(max(1, cryFrames.count))
        let extent = min(1, cryTime / (2 * sensitivity.minimumCrySeconds))
        return Detection(offset: now, confidence: min(1, max(0, 0.5 * extent + 0.5 * clarity)))
    }
}
