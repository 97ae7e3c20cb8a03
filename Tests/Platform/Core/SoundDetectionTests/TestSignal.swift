import Foundation
import TestSupport

/// Synthetic test signals, described in continuous time so the same signal can be rendered at 16 and 48 kHz.
enum TestSignal {
    /// One stretch of a gated tone.
    struct Segment {
        /// Length in milliseconds.
        var durationMs: Int
        /// Peak amplitude of the sine (0 = silence).
        var amplitude: Double
    }

    /// A continuous-phase sine whose amplitude is switched per segment.
    ///
    /// - Parameters:
    ///   - frequency: Tone frequency in hertz.
    ///   - sampleRate: Samples per second.
    ///   - segments: Consecutive stretches with their amplitudes.
    /// - Returns: The rendered samples.
    static func gatedTone(frequency: Double = 1000, sampleRate: Int, segments: [Segment]) -> [Float] {
        var samples: [Float] = []
        var sampleIndex = 0
        for segment in segments {
            let count = segment.durationMs * sampleRate / 1000
            for _ in 0..<count {
                let phase = 2 * Double.pi * frequency * Double(sampleIndex) / Double(sampleRate)
                samples.append(Float(segment.amplitude * sin(phase)))
                sampleIndex += 1
            }
        }
        return samples
    }

    /// A sine with constant amplitude.
    ///
    /// - Parameters:
    ///   - frequency: Tone frequency in hertz.
    ///   - amplitude: Peak amplitude.
    ///   - durationMs: Length in milliseconds.
    ///   - sampleRate: Samples per second.
    /// - Returns: The rendered samples.
    static func sine(frequency: Double = 1000, amplitude: Double, durationMs: Int, sampleRate: Int) -> [Float] {
        let segment = Segment(durationMs: durationMs, amplitude: amplitude)
        return gatedTone(frequency: frequency, sampleRate: sampleRate, segments: [segment])
    }

    /// A sine whose amplitude rises linearly from 0 to `peak` over the whole duration.
    ///
    /// - Parameters:
    ///   - frequency: Tone frequency in hertz.
    ///   - peak: Final amplitude.
    ///   - durationMs: Length in milliseconds.
    ///   - sampleRate: Samples per second.
    /// - Returns: The rendered samples.
    static func ramp(frequency: Double = 1000, peak: Double, durationMs: Int, sampleRate: Int) -> [Float] {
        let count = durationMs * sampleRate / 1000
        return (0..<count).map { index in
            let time = Double(index) / Double(sampleRate)
            let amplitude = peak * Double(index) / Double(count)
            return Float(amplitude * sin(2 * Double.pi * frequency * time))
        }
    }

    /// Adds seeded uniform noise to a signal.
    ///
    /// - Parameters:
    ///   - samples: The signal.
    ///   - amplitude: Noise peak amplitude.
    ///   - seed: Generator seed.
    /// - Returns: The noisy signal.
    static func addingNoise(to samples: [Float], amplitude: Float, seed: UInt64) -> [Float] {
        var generator = SplitMix64(seed: seed)
        return samples.map { $0 + amplitude * generator.nextSigned() }
    }

    /// The amplitude of a sine whose RMS is `decibels` dBFS.
    ///
    /// - Parameter decibels: RMS level in dBFS.
    /// - Returns: Peak amplitude (`√2 · 10^(dB/20)`).
    static func sineAmplitude(rmsDecibels decibels: Double) -> Double {
        2.0.squareRoot() * pow(10, decibels / 20)
    }
}
