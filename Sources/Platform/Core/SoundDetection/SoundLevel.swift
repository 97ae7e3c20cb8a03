import Foundation

/// Maps audio loudness to the 0...100 level used by thresholds and level meters.
///
/// The level is a linear rescaling of dBFS, where 0 dBFS is an RMS of 1.0 (samples normalised to −1...1):
///
///     dBFS  = 20 · log10(rms)
///     level = clamp(round((dBFS + 90) · 100 / 90), 0, 100)
///
/// so −90 dBFS → 0, −45 dBFS → 50, −36 dBFS → 60, 0 dBFS → 100. An RMS of 0 (digital silence), a negative
/// RMS or NaN map to 0; anything at or above full scale maps to 100. A full-scale sine (RMS 0.707, −3 dBFS)
/// reads 97; a sine whose RMS is −20 dBFS reads 78. Rounding is half away from zero.
public enum SoundLevel {
    /// Lowest representable loudness, in dBFS; maps to level 0.
    public static let floorDecibels: Double = -90

    /// Converts an RMS value to a level.
    ///
    /// - Parameter rms: Root mean square of samples normalised to −1...1.
    /// - Returns: The level in 0...100 (see the type documentation for the mapping).
    public static func level(rms: Float) -> Int {
        guard rms > 0 else { return 0 }  // also catches NaN
        guard rms < 1 else { return 100 }
        let decibels = 20 * log10(Double(rms))
        let scaled = ((decibels - floorDecibels) * 100 / -floorDecibels).rounded(.toNearestOrAwayFromZero)
        return Int(min(max(scaled, 0), 100))
    }

    /// Converts a level back to the lowest RMS that reads as that level (useful for tests and meters).
    ///
    /// - Parameter level: A level, clamped to 0...100.
    /// - Returns: The RMS at which ``level(rms:)`` first returns `level`; 0 for level 0.
    public static func minimumRMS(forLevel level: Int) -> Float {
        guard level > 0 else { return 0 }
        let decibels = (Double(min(level, 100)) - 0.5) * -floorDecibels / 100 + floorDecibels
        return Float(pow(10, decibels / 20))
    }

    /// Converts a level to its dBFS value (the inverse of the mapping, without rounding).
    ///
    /// - Parameter level: A level in 0...100.
    /// - Returns: `level · 0.9 − 90` dBFS.
    public static func decibels(forLevel level: Int) -> Double {
        Double(level) * -floorDecibels / 100 + floorDecibels
    }

    /// Root mean square of a buffer: `sqrt(mean(sample²))`.
    ///
    /// The sum is accumulated in SIMD lanes in a fixed order, so the result depends only on the samples (not on
    /// how the caller's buffer is aligned or chunked) and the loop vectorises. Plain multiply-add is used rather
    /// than fused `addingProduct`, which is a library call on x86-64 targets without FMA.
    ///
    /// - Parameter samples: Samples normalised to −1...1 (e.g. `array[range].span`).
    /// - Returns: The RMS, or 0 for an empty buffer.
    public static func rms(_ samples: Span<Float>) -> Float {
        let count = samples.count
        guard count > 0 else { return 0 }
        return (sumOfSquares(samples) / Float(count)).squareRoot()
    }

    /// Convenience overload for arrays.
    ///
    /// - Parameter samples: Samples normalised to −1...1.
    /// - Returns: The RMS, or 0 for an empty array.
    public static func rms(_ samples: [Float]) -> Float {
        let all = samples[...]
        return rms(all.span)
    }

    /// Sum of squares of the samples, accumulated 16 at a time in two SIMD8 lanes, then the tail in order.
    ///
    /// Each block of 16 is taken as a 16-element sub-span (one bounds check); the element reads inside it use
    /// constant indices, so their checks fold away and the eight scalar reads combine into vector loads.
    ///
    /// - Parameter samples: The samples.
    /// - Returns: `Σ sample²`.
    @inline(__always)
    static func sumOfSquares(_ samples: Span<Float>) -> Float {
        let count = samples.count
        var accumulatorA = SIMD8<Float>()
        var accumulatorB = SIMD8<Float>()
        var index = 0
        while index + 16 <= count {
            let block = samples.extracting(index..<(index + 16))
            let a = SIMD8<Float>(block[0], block[1], block[2], block[3], block[4], block[5], block[6], block[7])
            let b = SIMD8<Float>(block[8], block[9], block[10], block[11], block[12], block[13], block[14], block[15])
            accumulatorA += a * a
            accumulatorB += b * b
            index += 16
        }
        var total = (accumulatorA + accumulatorB).sum()
        while index < count {
            let sample = samples[index]
            total += sample * sample
            index += 1
        }
        return total
    }
}
