import Foundation
import SoundDetection
import TestSupport
import Testing

@Suite("Level mapping")
struct SoundLevelTests {
    @Test("digital silence reads 0 and fires nothing")
    func silence() throws {
        let samples = [Float](repeating: 0, count: 16_000 * 3)
        let run = try DetectorRun.run(samples)
        #expect(run.events.isEmpty)
        #expect(run.levels.count == 150)
        #expect(run.levels.allSatisfy { $0 == 0 })
        let all = samples[...]
        #expect(SoundLevel.rms(all.span) == 0)
        #expect(SoundLevel.rms(samples) == 0)
    }

    @Test("full-scale sine reads 97")
    func fullScaleSine() throws {
        let samples = TestSignal.sine(amplitude: 1, durationMs: 1000, sampleRate: 16_000)
        let all = samples[...]
        #expect(abs(SoundLevel.rms(all.span) - 0.70710678) < 1e-4)
        let run = try DetectorRun.run(samples)
        #expect(run.levels.count == 50)
        #expect(run.levels.allSatisfy { abs($0 - 97) <= 1 })
        #expect(run.levels.first == 97)
    }

    @Test("a sine at −20 dBFS RMS reads 78, at −20 dBFS peak reads 74")
    func minus20dBFS() throws {
        let amplitude = TestSignal.sineAmplitude(rmsDecibels: -20)
        let rmsSine = TestSignal.sine(amplitude: amplitude, durationMs: 200, sampleRate: 16_000)
        #expect(try DetectorRun.run(rmsSine).levels.allSatisfy { $0 == 78 })
        let peakSine = TestSignal.sine(amplitude: 0.1, durationMs: 200, sampleRate: 16_000)
        #expect(try DetectorRun.run(peakSine).levels.allSatisfy { $0 == 74 })
    }

    @Test("mapping endpoints and documented anchor points")
    func anchors() {
        #expect(SoundLevel.level(rms: 0) == 0)
        #expect(SoundLevel.level(rms: -0.5) == 0)
        #expect(SoundLevel.level(rms: .nan) == 0)
        #expect(SoundLevel.level(rms: 1e-6) == 0)  // −120 dBFS clamps to 0
        #expect(SoundLevel.level(rms: rms(decibels: -90)) == 0)
        #expect(SoundLevel.level(rms: rms(decibels: -45)) == 50)
        #expect(SoundLevel.level(rms: rms(decibels: -36)) == 60)
        #expect(SoundLevel.level(rms: 1) == 100)
        #expect(SoundLevel.level(rms: 4) == 100)
        #expect(SoundLevel.level(rms: .infinity) == 100)
        #expect(SoundLevel.decibels(forLevel: 60) == -36)
    }

    @Test("mapping is monotonic, clamped, and minimumRMS is its threshold inverse")
    func monotonic() {
        var previous = 0
        var seen = Set<Int>()
        var rms: Float = 1e-7
        while rms < 2 {
            let level = SoundLevel.level(rms: rms)
            #expect(level >= previous)
            #expect((0...100).contains(level))
            previous = level
            seen.insert(level)
            rms *= 1.001
        }
        #expect(seen == Set(0...100))
        for level in 1...100 {
            let boundary = SoundLevel.minimumRMS(forLevel: level)
            #expect(SoundLevel.level(rms: boundary * 1.0001) == level)
            #expect(SoundLevel.level(rms: boundary * 0.9999) == level - 1)
        }
    }

    @Test("rms of odd-length and unaligned buffers matches a scalar reference")
    func rmsReference() {
        var generator = SplitMix64(seed: 7)
        let samples = (0..<1003).map { _ in generator.nextSigned() }
        for range in [0..<1003, 1..<1003, 3..<20, 5..<6, 0..<0] {
            let reference =
                range.isEmpty
                ? 0
                : (samples[range].reduce(0.0) { $0 + Double($1) * Double($1) } / Double(range.count)).squareRoot()
            let slice = samples[range]
            let measured = SoundLevel.rms(slice.span)
            #expect(abs(Double(measured) - reference) < 1e-5)
        }
    }

    private func rms(decibels: Double) -> Float {
        Float(pow(10, decibels / 20))
    }
}
