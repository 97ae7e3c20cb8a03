import SoundDetection
import Testing

@Suite("Cooldown")
struct CooldownTests {
    /// 1 s bursts at level 90 starting at the given seconds, in a signal of `totalMs`.
    private func bursts(startingAt seconds: [Int], burstMs: Int = 1000, totalMs: Int) -> [Float] {
        var segments: [TestSignal.Segment] = []
        var position = 0
        for start in seconds.map({ $0 * 1000 }) {
            segments.append(.init(durationMs: start - position, amplitude: 0))
            segments.append(.init(durationMs: burstMs, amplitude: 0.5))
            position = start + burstMs
        }
        segments.append(.init(durationMs: totalMs - position, amplitude: 0))
        return TestSignal.gatedTone(sampleRate: 16_000, segments: segments)
    }

    @Test("two bursts 5 s apart with a 10 s cooldown fire once")
    func suppressed() throws {
        let run = try DetectorRun.run(bursts(startingAt: [1, 6], totalMs: 20_000))
        #expect(run.events.map(\.offsetMs) == [1600])
    }

    @Test("two bursts 12 s apart with a 10 s cooldown fire twice")
    func separate() throws {
        let run = try DetectorRun.run(bursts(startingAt: [1, 13], totalMs: 20_000))
        #expect(run.events.map(\.offsetMs) == [1600, 13_600])
        #expect(run.events.map(\.durationMs) == [600, 600])
        #expect(run.events.map(\.peakLevel) == [90, 90])
    }

    @Test("a continuous 30 s cry fires at 0.6 s and then every cooldown period")
    func continuous() throws {
        let samples = TestSignal.sine(amplitude: 0.5, durationMs: 30_000, sampleRate: 16_000)
        let run = try DetectorRun.run(samples)
        #expect(
            run.events == [
                NoiseDetection(offsetMs: 600, peakLevel: 90, durationMs: 600),
                NoiseDetection(offsetMs: 10_600, peakLevel: 90, durationMs: 10_600),
                NoiseDetection(offsetMs: 20_600, peakLevel: 90, durationMs: 20_600),
            ])
        let fast = try DetectorRun.run(samples, configuration: try SoundDetectorConfiguration(cooldownSeconds: 3))
        #expect(fast.events.map(\.offsetMs) == stride(from: 600, to: 30_000, by: 3000).map(Int64.init))
    }

    @Test("a streak that begins in the cooldown and is long enough fires as soon as the cooldown ends")
    func streakCarriesThroughCooldown() throws {
        // Event at 0.6 s; cooldown ends at 10.6 s; the second burst runs 9 s … 12 s.
        let run = try DetectorRun.run(bursts(startingAt: [0, 9], burstMs: 3000, totalMs: 14_000))
        #expect(run.events.map(\.offsetMs) == [600, 10_600])
        #expect(run.events.last?.durationMs == 1600)
    }

    @Test("a streak that ends inside the cooldown is lost")
    func streakEndsInCooldown() throws {
        let run = try DetectorRun.run(bursts(startingAt: [0, 8], burstMs: 2000, totalMs: 14_000))
        #expect(run.events.map(\.offsetMs) == [600])
    }

    @Test("cooldown 0 fires on every frame once the streak is long enough")
    func zeroCooldown() throws {
        let samples = TestSignal.sine(amplitude: 0.5, durationMs: 1000, sampleRate: 16_000)
        let run = try DetectorRun.run(samples, configuration: try SoundDetectorConfiguration(cooldownSeconds: 0))
        #expect(run.events.map(\.offsetMs) == stride(from: 600, through: 1000, by: 20).map(Int64.init))
    }

    @Test("frames are still measured during the cooldown")
    func measuredDuringCooldown() throws {
        var detector = try SoundDetector(configuration: .default, inputSampleRate: 16_000)
        let run = DetectorRun.feed(bursts(startingAt: [0, 3], totalMs: 5000), to: &detector)
        #expect(run.events.count == 1)
        #expect(run.levels[150..<200].allSatisfy { $0 == 90 })
        #expect(detector.isCoolingDown)
    }
}
