import SoundDetection
import Testing

@Suite("Live reconfiguration")
struct ReconfigurationTests {
    private let loud = TestSignal.sine(amplitude: 0.5, durationMs: 20_000, sampleRate: 16_000)  // level 90

    private func feed(_ detector: inout SoundDetector, fromMs: Int, toMs: Int) -> [NoiseDetection] {
        let range = (fromMs * 16)..<(toMs * 16)
        let chunk = loud[range]
        return detector.process(chunk.span)
    }

    @Test("raising the threshold above the sound breaks the streak; lowering it restarts the streak")
    func threshold() throws {
        var detector = try SoundDetector(configuration: .default, inputSampleRate: 16_000)
        #expect(feed(&detector, fromMs: 0, toMs: 400).isEmpty)
        #expect(detector.loudStreakMs == 400)
        detector.configuration.threshold = 95
        #expect(feed(&detector, fromMs: 400, toMs: 1000).isEmpty)
        #expect(detector.loudStreakMs == 0)
        detector.configuration.threshold = 60
        let events = feed(&detector, fromMs: 1000, toMs: 2000)
        #expect(events == [NoiseDetection(offsetMs: 1600, peakLevel: 90, durationMs: 600)])
    }

    @Test("shortening the minimum duration mid-streak fires on the next frame")
    func minimumDuration() throws {
        var detector = try SoundDetector(configuration: try .init(minDurationMs: 2000), inputSampleRate: 16_000)
        #expect(feed(&detector, fromMs: 0, toMs: 1000).isEmpty)
        detector.configuration.minDurationMs = 600
        let events = feed(&detector, fromMs: 1000, toMs: 1100)
        #expect(events == [NoiseDetection(offsetMs: 1020, peakLevel: 90, durationMs: 1020)])
    }

    @Test("a new cooldown is measured from the last event")
    func cooldown() throws {
        var detector = try SoundDetector(configuration: .default, inputSampleRate: 16_000)
        #expect(feed(&detector, fromMs: 0, toMs: 1000).map(\.offsetMs) == [600])
        detector.configuration.cooldownSeconds = 2
        #expect(feed(&detector, fromMs: 1000, toMs: 5000).map(\.offsetMs) == [2600, 4600])
    }

    @Test("out-of-range values set directly are clamped by the detector")
    func clamped() throws {
        var detector = try SoundDetector(configuration: .default, inputSampleRate: 16_000)
        detector.configuration.threshold = 500  // behaves as 100: a level-90 tone never counts as loud
        #expect(feed(&detector, fromMs: 0, toMs: 2000).isEmpty)
        detector.configuration.threshold = -3  // behaves as 0
        detector.configuration.minDurationMs = 1  // behaves as 20
        #expect(feed(&detector, fromMs: 2000, toMs: 2020).map(\.offsetMs) == [2020])
    }
}
