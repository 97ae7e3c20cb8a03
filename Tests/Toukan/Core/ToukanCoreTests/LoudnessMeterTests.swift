import Foundation
import Testing
import ToukanCore

/// BS.1770 / EBU R 128 integrated loudness on signals whose loudness is known.
@Suite("LoudnessMeter")
struct LoudnessMeterTests {
    static func sine(frequency: Double, amplitude: Double, seconds: Double, rate: Int) -> [Float] {
        (0..<Int(seconds * Double(rate))).map {
            Float(amplitude * sin(2 * .pi * frequency * Double($0) / Double(rate)))
        }
    }

    @Test(arguments: [48_000, 44_100, 16_000])
    func aFullScale997HzSineReadsMinus3LUFS(rate: Int) {
        var meter = LoudnessMeter(sampleRate: rate)
        meter.add(Self.sine(frequency: 997, amplitude: 1, seconds: 5, rate: rate))
        #expect(abs(meter.integratedLoudness - -3.01) < 0.05, "\(meter.integratedLoudness) at \(rate) Hz")
        #expect(abs(meter.duration - 5) < 1e-9)
    }

    @Test func twentyDecibelsDownReadsMinus23() {
        var meter = LoudnessMeter(sampleRate: 48_000)
        meter.add(Self.sine(frequency: 997, amplitude: 0.1, seconds: 5, rate: 48_000))
        #expect(abs(meter.integratedLoudness - -23.01) < 0.05, "\(meter.integratedLoudness)")
    }

    @Test func chunkingDoesNotChangeTheResult() {
        let signal = Self.sine(frequency: 440, amplitude: 0.5, seconds: 3, rate: 48_000)
        var whole = LoudnessMeter(sampleRate: 48_000)
        whole.add(signal)
        var chunked = LoudnessMeter(sampleRate: 48_000)
        var index = 0
        while index < signal.count {
            let end = min(index + 997, signal.count)
            chunked.add(signal[index..<end])
            index = end
        }
        #expect(whole.integratedLoudness == chunked.integratedLoudness)
    }

    @Test func silenceAndShortSignalsHaveNoLoudness() {
        var silence = LoudnessMeter(sampleRate: 48_000)
        silence.add([Float](repeating: 0, count: 48_000 * 2))
        #expect(silence.integratedLoudness == LoudnessMeter.silence)
        var short = LoudnessMeter(sampleRate: 48_000)
        short.add(Self.sine(frequency: 997, amplitude: 1, seconds: 0.3, rate: 48_000))
        #expect(short.integratedLoudness == LoudnessMeter.silence)
    }

    /// The relative gate: a quiet tail 30 LU down does not pull the loudness of the loud part down.
    @Test func theRelativeGateIgnoresQuietPassages() {
        var meter = LoudnessMeter(sampleRate: 48_000)
        meter.add(Self.sine(frequency: 997, amplitude: 1, seconds: 5, rate: 48_000))
        meter.add(Self.sine(frequency: 997, amplitude: 0.03, seconds: 20, rate: 48_000))
        #expect(abs(meter.integratedLoudness - -3.01) < 0.2, "\(meter.integratedLoudness)")
    }
}
