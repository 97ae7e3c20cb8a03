import SoundDetection
import Testing

@Suite("Minimum duration and event contents")
struct DetectionTimingTests {
    /// Level 90 (−9 dBFS RMS) tone burst starting at 1 s, frame-aligned, followed by 2 s of silence.
    private func burst(durationMs: Int, amplitude: Double = 0.5) -> [Float] {
        TestSignal.gatedTone(
            sampleRate: 16_000,
            segments: [
                .init(durationMs: 1000, amplitude: 0),
                .init(durationMs: durationMs, amplitude: amplitude),
                .init(durationMs: 2000, amplitude: 0),
            ]
        )
    }

    @Test("a burst just under the minimum duration fires nothing")
    func underMinimum() throws {
        let run = try DetectorRun.run(burst(durationMs: 580))
        #expect(run.events.isEmpty)
        #expect(run.levels.filter { $0 >= 60 }.count == 29)
    }

    @Test("a burst just over the minimum duration fires once, when the streak reaches 600 ms")
    func overMinimum() throws {
        let run = try DetectorRun.run(burst(durationMs: 620))
        let burstLevel = SoundLevel.level(rms: Float(0.5 / 2.0.squareRoot()))
        #expect(burstLevel == 90)
        #expect(run.events == [NoiseDetection(offsetMs: 1600, peakLevel: burstLevel, durationMs: 600)])
    }

    @Test("exactly the minimum duration fires")
    func exactMinimum() throws {
        let run = try DetectorRun.run(burst(durationMs: 600))
        #expect(run.events.map(\.offsetMs) == [1600])
    }

    @Test("a minimum duration that is not a multiple of 20 ms rounds up to whole frames")
    func roundsUp() throws {
        let configuration = try SoundDetectorConfiguration(minDurationMs: 610)
        #expect(try DetectorRun.run(burst(durationMs: 600), configuration: configuration).events.isEmpty)
        let run = try DetectorRun.run(burst(durationMs: 620), configuration: configuration)
        #expect(run.events.map(\.offsetMs) == [1620])
        #expect(run.events.map(\.durationMs) == [620])
    }

    @Test("a burst below the threshold never fires; raising it above fires")
    func threshold() throws {
        let quiet = TestSignal.sineAmplitude(rmsDecibels: -40)  // level 56
        #expect(try DetectorRun.run(burst(durationMs: 2000, amplitude: quiet)).events.isEmpty)
        let lowered = try SoundDetectorConfiguration(threshold: 55)
        let run = try DetectorRun.run(burst(durationMs: 2000, amplitude: quiet), configuration: lowered)
        #expect(run.events.count == 1)
    }

    @Test("peak level is the maximum of the streak, not of the triggering frame")
    func peakOfStreak() throws {
        let samples = TestSignal.gatedTone(
            sampleRate: 16_000,
            segments: [
                .init(durationMs: 200, amplitude: 0),
                .init(durationMs: 100, amplitude: 0.9),  // level 96
                .init(durationMs: 700, amplitude: 0.1),  // level 74
                .init(durationMs: 500, amplitude: 0),
            ]
        )
        let run = try DetectorRun.run(samples)
        #expect(run.events == [NoiseDetection(offsetMs: 800, peakLevel: 96, durationMs: 600)])
    }

    @Test("a linear level ramp fires when the level first stays above threshold for the minimum duration")
    func ramp() throws {
        let samples = TestSignal.ramp(peak: 1, durationMs: 10_000, sampleRate: 16_000)
        let run = try DetectorRun.run(samples)
        // Independent oracle: measure every frame of the whole signal directly.
        let levels = stride(from: 0, to: samples.count, by: 320).map { start in
            let frame = samples[start..<(start + 320)]
            return SoundLevel.level(rms: SoundLevel.rms(frame.span))
        }
        #expect(run.levels == levels)
        let firstLoudRun = try #require(
            (0...(levels.count - 30)).first { start in
                levels[start..<(start + 30)].allSatisfy { $0 >= 60 }
            })
        // Analytically: amplitude 0.0213 (level 59.5) is reached at 213 ms, so frame 11 (220–240 ms) is the
        // first loud one and the streak reaches 600 ms at 820 ms.
        #expect(firstLoudRun == 11)
        let event = try #require(run.events.first)
        #expect(run.events.count == 1)  // the next one could only come 10 s later, after the signal ends
        #expect(event.offsetMs == Int64(firstLoudRun + 30) * 20)
        #expect(event.durationMs == 600)
        #expect(event.peakLevel >= 60)
        #expect(event.peakLevel == levels[firstLoudRun..<(firstLoudRun + 30)].max())
    }
}
