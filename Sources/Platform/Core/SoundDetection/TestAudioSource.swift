import Foundation

/// The monitor's built-in test sources (PROTOCOL.md §8), as deterministic 16 kHz mono signals.
///
/// - `silence`: quiet room noise around −60 dBFS (never reaches the default threshold).
/// - `cry`: the same room noise with a 3 s cry-like burst every 10 s (starting 2 s in): a tone warbling around
///   450 Hz with its second harmonic, at about −15 dBFS — loud enough to pass the default threshold (60) for
///   the default minimum duration, so it yields a noise event at least every 20 s with the default settings.
public struct TestAudioSource: Sendable {
    /// Which signal.
    public enum Kind: String, Sendable, CaseIterable {
        case silence
        case cry
    }

    /// The sample rate of the generated signal.
    public static let sampleRate = 16_000

    public let kind: Kind
    private var sampleIndex: Int64 = 0
    private var phase: Double = 0
    private var noiseState: UInt64 = 0x2545_F491_4F6C_DD1D

    public init(_ kind: Kind) {
        self.kind = kind
    }

    /// Parses `test:silence` / `test:cry`; nil for anything else.
    public init?(source: String) {
        guard source.hasPrefix("test:"), let kind = Kind(rawValue: String(source.dropFirst(5))) else { return nil }
        self.init(kind)
    }

    /// The next `count` samples in [-1, 1].
    public mutating func next(_ count: Int) -> [Float] {
        var samples = [Float](repeating: 0, count: count)
        let rate = Double(Self.sampleRate)
        for index in 0..<count {
            let time = Double(sampleIndex) / rate
            var value = noise() * 0.001
            if kind == .cry {
                let cycle = time.truncatingRemainder(dividingBy: 10)
                if cycle >= 2, cycle < 5 {
                    // Soft 125 ms attack and release, so the burst has no clicks.
                    let envelope = min(1, (cycle - 2) * 8) * min(1, (5 - cycle) * 8)
                    value += envelope * 0.2 * (sin(phase) + 0.4 * sin(2 * phase))
                }
                // The phase is accumulated so the instantaneous frequency stays at 450 ± 60 Hz.
                phase += 2 * Double.pi * (450 + 60 * sin(2 * Double.pi * 5 * time)) / rate
                if phase > 2 * Double.pi { phase -= 2 * Double.pi }
            }
            samples[index] = Float(max(-1, min(1, value)))
            sampleIndex += 1
        }
        return samples
    }

    /// Uniform noise in [-1, 1] from a xorshift generator (deterministic, no system randomness).
    private mutating func noise() -> Double {
        noiseState ^= noiseState << 13
        noiseState ^= noiseState >> 7
        noiseState ^= noiseState << 17
        return Double(noiseState >> 11) / Double(1 << 52) - 1
    }
}
