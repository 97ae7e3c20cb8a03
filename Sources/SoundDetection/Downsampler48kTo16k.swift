import Foundation

/// Converts 48 kHz mono audio to 16 kHz: a linear-phase low-pass FIR anti-alias filter followed by
/// decimation by 3, computing only the samples that are kept.
///
/// Filter design (fixed, computed once): 63-tap windowed sinc, cutoff 7 kHz (−6 dB), Kaiser window β = 8,
/// normalised to unity gain at DC. Response: flat to ±0.01 dB up to 4 kHz, −0.65 dB at 6 kHz, −23 dB at 8 kHz
/// (the new Nyquist), ≤ −80 dB from 9 kHz up (so a 20 kHz tone is removed almost entirely). Group delay is
/// 31 input samples (≈ 0.65 ms).
///
/// Output sample `m` is `y[m] = Σₖ h[k] · x[3m − k]`; input before the first sample is taken as silence. The
/// last 63 input samples are kept across calls, so the output does not depend on how the input is chunked
/// (it is bit-identical for any chunking). No allocation happens per call beyond growing `output`.
public struct Downsampler48kTo16k: Sendable {
    /// Decimation factor (48 000 / 16 000).
    public static let factor = 3
    /// Number of filter taps.
    public static let tapCount = 63
    /// Filter cutoff in hertz (the −6 dB point of the windowed sinc).
    public static let cutoffHz = 7000.0
    /// Kaiser window shape parameter.
    public static let kaiserBeta = 8.0

    /// Taps stored as a zero followed by the 63 taps, in memory order of the 64-sample window
    /// `x[3m − 63] … x[3m]`, grouped in eight SIMD8 vectors.
    private static let windowCoefficients: [SIMD8<Float>] = {
        let taps = designTaps()
        var padded = [Float](repeating: 0, count: paddedTapCount)
        for index in 1..<paddedTapCount {
            // window position j holds x[3m − 63 + j], weighted by h[63 − j]; h is symmetric.
            padded[index] = Float(taps[paddedTapCount - 1 - index])
        }
        return stride(from: 0, to: paddedTapCount, by: 8).map { start in
            SIMD8<Float>(padded[start..<(start + 8)])
        }
    }()

    private static let paddedTapCount = 64
    private static let historyCount = tapCount

    /// Last `tapCount` input samples in `[0, historyCount)`, followed by room for the head of the next chunk.
    private var boundary: [Float]
    /// Index, within the next chunk, of the next input sample that produces an output (0...2).
    private var phase: Int

    /// Creates a downsampler whose history is silence.
    public init() {
        boundary = [Float](repeating: 0, count: 2 * Self.historyCount)
        phase = 0
    }

    /// The filter taps `h[0…62]` (symmetric, summing to 1), for inspection and tests.
    public static var taps: [Float] {
        designTaps().map { Float($0) }
    }

    /// Filters and decimates one chunk of 48 kHz samples, appending the 16 kHz samples to `output`.
    ///
    /// Every third input sample (counting from the first sample of the stream) produces one output, so a
    /// chunk of `n` samples appends ⌊n/3⌋ or ⌈n/3⌉ samples depending on where the previous chunk ended.
    ///
    /// - Parameters:
    ///   - input: 48 kHz samples, any count (including 0).
    ///   - output: Receives the 16 kHz samples; existing contents are kept.
    public mutating func process(_ input: UnsafeBufferPointer<Float>, into output: inout [Float]) {
        let count = input.count
        guard count > 0, let inputBase = input.baseAddress else { return }
        let history = Self.historyCount
        let start = phase
        let outputCount = count > start ? (count - start + Self.factor - 1) / Self.factor : 0
        phase = start + outputCount * Self.factor - count

        let firstOutput = output.count
        output.append(contentsOf: repeatElement(0, count: outputCount))
        let head = min(count, history)

        Self.windowCoefficients.withUnsafeBufferPointer { coefficients in
            let taps = coefficients.baseAddress!
            boundary.withUnsafeMutableBufferPointer { boundary in
                let joined = boundary.baseAddress!
                (joined + history).update(from: inputBase, count: head)
                output.withUnsafeMutableBufferPointer { output in
                    let out = output.baseAddress! + firstOutput
                    var written = 0
                    var index = start
                    // Windows that reach back into the previous chunk: read them from history + head.
                    while index < head {
                        out[written] = Self.dot(UnsafeRawPointer(joined + index), taps)
                        written += 1
                        index += Self.factor
                    }
                    // Windows entirely inside this chunk.
                    while index < count {
                        out[written] = Self.dot(UnsafeRawPointer(inputBase + index - history), taps)
                        written += 1
                        index += Self.factor
                    }
                }
                // Keep the last `history` samples of the stream.
                if count >= history {
                    joined.update(from: inputBase + count - history, count: history)
                } else {
                    for index in 0..<history {
                        joined[index] = joined[index + count]
                    }
                }
            }
        }
    }

    /// Convenience overload for arrays.
    ///
    /// - Parameters:
    ///   - input: 48 kHz samples.
    ///   - output: Receives the 16 kHz samples; existing contents are kept.
    public mutating func process(_ input: [Float], into output: inout [Float]) {
        input.withUnsafeBufferPointer { process($0, into: &output) }
    }

    /// Dot product of the 64-sample window at `window` with the padded taps, in a fixed summation order.
    @inline(__always)
    private static func dot(_ window: UnsafeRawPointer, _ taps: UnsafePointer<SIMD8<Float>>) -> Float {
        let stride = 8 * MemoryLayout<Float>.stride
        var sumA = taps[0] * window.loadUnaligned(fromByteOffset: 0, as: SIMD8<Float>.self)
        var sumB = taps[1] * window.loadUnaligned(fromByteOffset: stride, as: SIMD8<Float>.self)
        sumA += taps[2] * window.loadUnaligned(fromByteOffset: 2 * stride, as: SIMD8<Float>.self)
        sumB += taps[3] * window.loadUnaligned(fromByteOffset: 3 * stride, as: SIMD8<Float>.self)
        sumA += taps[4] * window.loadUnaligned(fromByteOffset: 4 * stride, as: SIMD8<Float>.self)
        sumB += taps[5] * window.loadUnaligned(fromByteOffset: 5 * stride, as: SIMD8<Float>.self)
        sumA += taps[6] * window.loadUnaligned(fromByteOffset: 6 * stride, as: SIMD8<Float>.self)
        sumB += taps[7] * window.loadUnaligned(fromByteOffset: 7 * stride, as: SIMD8<Float>.self)
        return (sumA + sumB).sum()
    }

    /// Windowed-sinc low-pass design: `h[k] = 2fc/fs · sinc(2fc/fs · (k − 31)) · kaiser(k)`, normalised to
    /// unity DC gain.
    ///
    /// - Returns: The `tapCount` taps in double precision.
    private static func designTaps() -> [Double] {
        let normalizedCutoff = 2 * cutoffHz / 48_000
        let center = Double(tapCount - 1) / 2
        let windowNorm = besselI0(kaiserBeta)
        var taps = (0..<tapCount).map { index -> Double in
            let offset = Double(index) - center
            let argument = Double.pi * normalizedCutoff * offset
            let sinc = offset == 0 ? 1 : sin(argument) / argument
            let ratio = offset / center
            let window = besselI0(kaiserBeta * (1 - ratio * ratio).squareRoot()) / windowNorm
            return normalizedCutoff * sinc * window
        }
        let sum = taps.reduce(0, +)
        for index in taps.indices {
            taps[index] /= sum
        }
        return taps
    }

    /// Modified Bessel function of the first kind, order 0, by its power series.
    ///
    /// - Parameter x: Argument (small, ≤ 10 here).
    /// - Returns: `I₀(x)`.
    private static func besselI0(_ x: Double) -> Double {
        var sum = 1.0
        var term = 1.0
        let quarterSquare = x * x / 4
        var k = 1.0
        while term > sum * 1e-17 {
            term *= quarterSquare / (k * k)
            sum += term
            k += 1
        }
        return sum
    }
}
