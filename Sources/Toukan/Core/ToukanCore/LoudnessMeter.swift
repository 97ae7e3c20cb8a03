public import Foundation

/// Integrated loudness of a mono signal per ITU-R BS.1770-4 / EBU R 128, fed in chunks (the server's worker feeds
/// it decoded PCM as it streams, so a two-hour recording needs no more memory than one value per 100 ms).
///
/// K-weighting (the shelving pre-filter and the RLB high-pass, designed for any sample rate as libebur128 does),
/// mean square over 400 ms blocks overlapping by 75 %, the absolute gate at −70 LUFS and the relative gate 10 LU
/// below the loudness of the blocks above it. For one channel the loudness is `−0.691 + 10·log10(mean square)`, so
/// a 997 Hz sine at 0 dBFS reads −3.01 LUFS. Multi-channel audio is measured on its mono downmix by the caller.
public struct LoudnessMeter: Sendable {
    /// The loudness of a signal with no gated block (silence, or shorter than 400 ms).
    public static let silence = -Double.infinity

    public let sampleRate: Int
    private var shelf: Biquad
    private var highPass: Biquad
    /// Samples per 100 ms step; a block is four steps.
    private let stepLength: Int
    /// Sum of squares of the current step so far, and how many samples it has.
    private var stepSum = 0.0
    private var stepCount = 0
    /// The last four steps' sums of squares.
    private var recentSteps: [Double] = []
    /// Every 400 ms block's mean square, in order.
    private var blockPowers: [Double] = []
    /// Samples fed.
    public private(set) var sampleCount: Int64 = 0

    /// - Parameter sampleRate: Samples per second of what ``add(_:)`` is fed (at least 8000).
    public init(sampleRate: Int) {
        precondition(sampleRate >= 8_000, "a loudness meter needs at least 8 kHz")
        self.sampleRate = sampleRate
        let rate = Double(sampleRate)
        // Stage 1: the high shelf that models the head (libebur128's design of the BS.1770 48 kHz filter).
        var f0 = 1681.974450955533
        let gain = 3.999843853973347
        var q = 0.7071752369554196
        var k = tan(Double.pi * f0 / rate)
        let vh = pow(10.0, gain / 20.0)
        let vb = pow(vh, 0.4996667741545416)
        var a0 = 1.0 + k / q + k * k
        shelf = Biquad(
            b0: (vh + vb * k / q + k * k) / a0, b1: 2.0 * (k * k - vh) / a0, b2: (vh - vb * k / q + k * k) / a0,
            a1: 2.0 * (k * k - 1.0) / a0, a2: (1.0 - k / q + k * k) / a0)
        // Stage 2: the RLB high-pass.
        f0 = 38.13547087602444
        q = 0.5003270373238773
        k = tan(Double.pi * f0 / rate)
        a0 = 1.0 + k / q + k * k
        highPass = Biquad(
            b0: 1.0, b1: -2.0, b2: 1.0, a1: 2.0 * (k * k - 1.0) / a0, a2: (1.0 - k / q + k * k) / a0)
        stepLength = max(1, sampleRate / 10)
    }

    /// Feeds the next samples (−1…1 full scale).
    public mutating func add(_ samples: some Sequence<Float>) {
        for sample in samples {
            let weighted = highPass.process(shelf.process(Double(sample)))
            stepSum += weighted * weighted
            stepCount += 1
            sampleCount += 1
            if stepCount == stepLength { closeStep() }
        }
    }

    private mutating func closeStep() {
        recentSteps.append(stepSum)
        if recentSteps.count > 4 { recentSteps.removeFirst() }
        if recentSteps.count == 4 {
            blockPowers.append(recentSteps.reduce(0, +) / Double(4 * stepLength))
        }
        stepSum = 0
        stepCount = 0
    }

    /// The duration of what was fed, in seconds.
    public var duration: Double { Double(sampleCount) / Double(sampleRate) }

    /// The gated integrated loudness in LUFS, or ``silence`` (−∞) when no block passes the absolute gate.
    public var integratedLoudness: Double {
        let absoluteGate = Self.power(ofLoudness: -70)
        let loud = blockPowers.filter { $0 > absoluteGate }
        guard !loud.isEmpty else { return Self.silence }
        let relativeGate = Self.power(ofLoudness: Self.loudness(ofPower: loud.reduce(0, +) / Double(loud.count)) - 10)
        let gated = loud.filter { $0 > relativeGate }
        guard !gated.isEmpty else { return Self.silence }
        return Self.loudness(ofPower: gated.reduce(0, +) / Double(gated.count))
    }

    static func loudness(ofPower power: Double) -> Double { -0.691 + 10 * log10(power) }

    static func power(ofLoudness loudness: Double) -> Double { pow(10, (loudness + 0.691) / 10) }
}

/// A second-order IIR section in transposed direct form II.
struct Biquad: Sendable {
    let b0: Double
    let b1: Double
    let b2: Double
    let a1: Double
    let a2: Double
    private var z1 = 0.0
    private var z2 = 0.0

    init(b0: Double, b1: Double, b2: Double, a1: Double, a2: Double) {
        self.b0 = b0
        self.b1 = b1
        self.b2 = b2
        self.a1 = a1
        self.a2 = a2
    }

    mutating func process(_ x: Double) -> Double {
        let y = b0 * x + z1
        z1 = b1 * x - a1 * y + z2
        z2 = b2 * x - a2 * y
        return y
    }
}
