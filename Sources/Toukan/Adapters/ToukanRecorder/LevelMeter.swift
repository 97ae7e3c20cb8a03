import Foundation

/// Cuts a stream of samples into stretches of `interval` samples and measures each (peak and RMS in dBFS).
struct LevelMeter {
    let interval: Int
    private var count = 0
    private var sumOfSquares: Double = 0
    private var peak: Float = 0

    /// - Parameter interval: Samples per reported level; at least 1.
    init(interval: Int) {
        self.interval = max(1, interval)
    }

    /// Adds samples; returns the levels of the stretches they complete, each with the sample index where it ends
    /// (counted from `firstIndex`, the index of `samples[0]`).
    mutating func add(_ samples: [Float], firstIndex: Int64) -> [(
        peakDecibels: Double, rmsDecibels: Double, end: Int64
    )] {
        var levels: [(peakDecibels: Double, rmsDecibels: Double, end: Int64)] = []
        for (offset, sample) in samples.enumerated() {
            sumOfSquares += Double(sample) * Double(sample)
            peak = max(peak, abs(sample))
            count += 1
            if count == interval {
                let rms = (sumOfSquares / Double(count)).squareRoot()
                levels.append((Self.decibels(Double(peak)), Self.decibels(rms), firstIndex + Int64(offset) + 1))
                count = 0
                sumOfSquares = 0
                peak = 0
            }
        }
        return levels
    }

    /// 20·log10(value), never below ``AudioLevel/floorDecibels``.
    static func decibels(_ value: Double) -> Double {
        guard value > 0 else { return AudioLevel.floorDecibels }
        return max(AudioLevel.floorDecibels, 20 * log10(value))
    }
}
