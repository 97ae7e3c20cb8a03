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
/// (it is bit-identical for any chunking). No allocation happens per call beyond growing `output` (the scratch
/// buffers grow once, to the largest block seen, at most ``blockLimit`` samples).
///
/// Implementation (polyphase): with `j = 3q + r`, the window samples `x[3m − 63 + j]` of consecutive outputs are
/// consecutive samples of the three phase sequences `x[3i + r]`. Each block is de-interleaved into the three
/// phases, then the outputs are accumulated tap group by tap group over plain arrays, a loop the compiler
/// vectorises across outputs with ordinary bounds-checked (hoisted) array access. Every output is summed in the
/// same fixed order, whatever the chunking.
public struct Downsampler48kTo16k: Sendable {
    /// Decimation factor (48 000 / 16 000).
    public static let factor = 3
    /// Number of filter taps.
    public static let tapCount = 63
    /// Filter cutoff in hertz (the −6 dB point of the windowed sinc).
    public static let cutoffHz = 7000.0
    /// Kaiser window shape parameter.
    public static let kaiserBeta = 8.0

    /// Input samples filtered per block; longer chunks are split, bounding the scratch buffers.
    public static let blockLimit = 4_800

    /// Window coefficients in window order: `c[j]` weights `x[3m − 63 + j]`, so `c[0] = 0` and
    /// `c[j] = h[63 − j]` for `j` in 1...63.
    private static let windowCoefficients: [Float] = {
        let taps = designTaps()
        var coefficients = [Float](repeating: 0, count: windowLength)
        for index in 1..<windowLength {
            coefficients[index] = Float(taps[windowLength - 1 - index])
        }
        return coefficients
    }()

    /// Samples in the window of one output, `x[3m − 63] … x[3m]`.
    private static let windowLength = 64
    private static let historyCount = tapCount
    /// Tap groups `q` (window positions `3q…3q+2`); the last group holds only position 63.
    private static let groupCount = 22

    /// Last `historyCount` input samples, followed by the current block.
    private var stream: ContiguousArray<Float>
    /// Index, within the next chunk, of the next input sample that produces an output (0...2).
    private var phase: Int
    /// De-interleaved window samples of the current block: `phaseR[i] = stream[start + 3i + r]`.
    private var phase0: ContiguousArray<Float> = []
    private var phase1: ContiguousArray<Float> = []
    private var phase2: ContiguousArray<Float> = []
    /// Outputs of the current block while they are accumulated.
    private var accumulator: ContiguousArray<Float> = []

    /// Creates a downsampler whose history is silence.
    public init() {
        stream = ContiguousArray(repeating: 0, count: Self.historyCount)
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
    ///   - input: 48 kHz samples, any count (including 0), e.g. `array[range].span`.
    ///   - output: Receives the 16 kHz samples; existing contents are kept.
    public mutating func process(_ input: Span<Float>, into output: inout [Float]) {
        var offset = 0
        while offset < input.count {
            let end = min(offset + Self.blockLimit, input.count)
            processBlock(input.extracting(offset..<end), into: &output)
            offset = end
        }
    }

    /// Convenience overload for arrays.
    ///
    /// - Parameters:
    ///   - input: 48 kHz samples.
    ///   - output: Receives the 16 kHz samples; existing contents are kept.
    public mutating func process(_ input: [Float], into output: inout [Float]) {
        let all = input[...]
        process(all.span, into: &output)
    }

    /// Filters one block of at most ``blockLimit`` samples.
    private mutating func processBlock(_ block: Span<Float>, into output: inout [Float]) {
        let count = block.count
        let history = Self.historyCount
        let start = phase
        let outputCount = count > start ? (count - start + Self.factor - 1) / Self.factor : 0
        phase = start + outputCount * Self.factor - count

        // Append the block after the history.
        Self.grow(&stream, to: history + count)
        do {
            var target = stream.mutableSpan
            precondition(history + count <= target.count)
            for index in 0..<count {
                target[history + index] = block[index]
            }
        }
        if outputCount > 0 {
            Self.grow(&phase0, to: outputCount + Self.groupCount - 1)
            Self.grow(&phase1, to: outputCount + Self.groupCount - 2)
            Self.grow(&phase2, to: outputCount + Self.groupCount - 2)
            Self.grow(&accumulator, to: outputCount)
            Self.deinterleave(stream, start: start, rows: outputCount, into: &phase0, &phase1, &phase2)
            Self.filter(phase0, phase1, phase2, outputCount: outputCount, into: &accumulator)
            output.append(contentsOf: accumulator[0..<outputCount])
        }
        // Keep the last `history` samples of the stream (ascending copy; the source is never below the target).
        var whole = stream.mutableSpan
        precondition(count + history <= whole.count)
        for index in 0..<history {
            whole[index] = whole[count + index]
        }
    }

    /// Splits the windows of `rows` outputs into the three phases: `phaseR[i] = stream[start + 3i + r]`, for
    /// `i < rows + 21` (phase 0) or `i < rows + 20` (phases 1 and 2), which is every sample the windows use.
    private static func deinterleave(
        _ streamBuffer: ContiguousArray<Float>,
        start: Int,
        rows: Int,
        into phase0: inout ContiguousArray<Float>,
        _ phase1: inout ContiguousArray<Float>,
        _ phase2: inout ContiguousArray<Float>
    ) {
        let rows0 = rows + groupCount - 1
        let rows12 = rows + groupCount - 2
        let stream = streamBuffer.span
        var target0 = phase0.mutableSpan
        precondition(rows0 <= target0.count && start + factor * (rows0 - 1) < stream.count)
        for row in 0..<rows0 {
            target0[row] = stream[start + factor * row]
        }
        var target1 = phase1.mutableSpan
        var target2 = phase2.mutableSpan
        precondition(rows12 <= target1.count && rows12 <= target2.count)
        for row in 0..<rows12 {
            target1[row] = stream[start + factor * row + 1]
            target2[row] = stream[start + factor * row + 2]
        }
    }

    /// Computes `outputCount` outputs into `sums[0..<outputCount]` from the de-interleaved phases:
    /// `y[m] = Σ_q c[3q]·phase0[m+q] + c[3q+1]·phase1[m+q] + c[3q+2]·phase2[m+q]`, group by group in order.
    private static func filter(
        _ phase0: ContiguousArray<Float>,
        _ phase1: ContiguousArray<Float>,
        _ phase2: ContiguousArray<Float>,
        outputCount: Int,
        into accumulator: inout ContiguousArray<Float>
    ) {
        let coefficients = windowCoefficients
        let samples0 = phase0.span
        let samples1 = phase1.span
        let samples2 = phase2.span
        let groups = groupCount
        let last = groups - 1
        var sums = accumulator.mutableSpan
        precondition(
            outputCount <= sums.count && outputCount + last <= samples0.count
                && outputCount + last - 1 <= samples1.count && outputCount + last - 1 <= samples2.count
        )
        // Group 0: window positions 1 and 2 (position 0 has a zero coefficient).
        do {
            let c1 = coefficients[1]
            let c2 = coefficients[2]
            for m in 0..<outputCount {
                sums[m] = c1 * samples1[m] + c2 * samples2[m]
            }
        }
        // Groups 1...20: window positions 3q, 3q + 1, 3q + 2.
        for group in 1..<last {
            let c0 = coefficients[factor * group]
            let c1 = coefficients[factor * group + 1]
            let c2 = coefficients[factor * group + 2]
            for m in 0..<outputCount {
                sums[m] += c0 * samples0[group + m] + c1 * samples1[group + m] + c2 * samples2[group + m]
            }
        }
        // Group 21: window position 63 only.
        let c0 = coefficients[factor * last]
        for m in 0..<outputCount {
            sums[m] += c0 * samples0[last + m]
        }
    }

    /// Grows `buffer` with zeros to at least `count` elements (existing contents kept; never shrinks).
    private static func grow(_ buffer: inout ContiguousArray<Float>, to count: Int) {
        if buffer.count < count {
            buffer.append(contentsOf: repeatElement(0, count: count - buffer.count))
        }
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
