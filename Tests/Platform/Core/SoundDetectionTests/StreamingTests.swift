import SoundDetection
import Testing

@Suite("Streaming")
struct StreamingTests {
    /// 12 s of low noise with tone bursts; cooldown 2 s so several events fire.
    private static func signal(sampleRate: Int) -> [Float] {
        let tone = TestSignal.gatedTone(
            sampleRate: sampleRate,
            segments: [
                .init(durationMs: 510, amplitude: 0),
                .init(durationMs: 3333, amplitude: 0.4),
                .init(durationMs: 1517, amplitude: 0),
                .init(durationMs: 650, amplitude: 0.05),
                .init(durationMs: 2000, amplitude: 0),
                .init(durationMs: 3990, amplitude: 0.8),
            ]
        )
        return TestSignal.addingNoise(to: tone, amplitude: 0.003, seed: 2024)
    }

    private static let configuration = try! SoundDetectorConfiguration(cooldownSeconds: 2)

    @Test("chunks of 1, 7, 320 and 4096 samples give identical events and levels", arguments: [16_000, 48_000])
    func chunkingInvariance(sampleRate: Int) throws {
        let samples = Self.signal(sampleRate: sampleRate)
        let reference = try DetectorRun.run(
            samples,
            sampleRate: sampleRate,
            configuration: Self.configuration,
            chunkSize: samples.count
        )
        #expect(reference.events.count >= 4)
        for chunkSize in [1, 7, 320, 4096] {
            let run = try DetectorRun.run(
                samples,
                sampleRate: sampleRate,
                configuration: Self.configuration,
                chunkSize: chunkSize
            )
            #expect(run == reference, "chunk size \(chunkSize)")
        }
    }

    @Test("the Int16 path equals the Float path", arguments: [16_000, 48_000])
    func int16(sampleRate: Int) throws {
        let pcm = Self.signal(sampleRate: sampleRate).map { Int16(max(-32_768, min(32_767, ($0 * 32_768).rounded()))) }
        let floats = pcm.map { Float($0) / 32_768 }
        var floatDetector = try SoundDetector(configuration: Self.configuration, inputSampleRate: sampleRate)
        var intDetector = try SoundDetector(configuration: Self.configuration, inputSampleRate: sampleRate)
        var floatEvents: [NoiseDetection] = []
        var intEvents: [NoiseDetection] = []
        var floatLevels: [Int] = []
        var intLevels: [Int] = []
        let chunk = 5000
        var start = 0
        while start < pcm.count {
            let end = min(start + chunk, pcm.count)
            let floatChunk = floats[start..<end]
            floatEvents += floatDetector.process(floatChunk.span, frameLevels: &floatLevels)
            let intChunk = pcm[start..<end]
            intEvents += intDetector.process(int16: intChunk.span, frameLevels: &intLevels)
            #expect(intDetector.currentLevel == floatDetector.currentLevel)
            #expect(intDetector.framesProcessed == floatDetector.framesProcessed)
            start = end
        }
        #expect(floatEvents.count >= 4)
        #expect(intEvents == floatEvents)
        #expect(intLevels == floatLevels)
        #expect(intLevels.count == 12_000 / 20)
    }

    @Test("Int16 full scale maps to ±1")
    func int16FullScale() throws {
        var detector = try SoundDetector(configuration: .default, inputSampleRate: 16_000)
        let square = (0..<320).map { $0 % 2 == 0 ? Int16.min : Int16.max }
        let all = square[...]
        _ = detector.process(int16: all.span)
        #expect(detector.currentLevel == 100)
    }

    @Test("currentLevel, framesProcessed and processedDurationMs follow completed frames")
    func counters() throws {
        var detector = try SoundDetector(configuration: .default, inputSampleRate: 48_000)
        #expect(detector.currentLevel == 0)
        _ = detector.process(TestSignal.sine(amplitude: 1, durationMs: 30, sampleRate: 48_000))
        #expect(detector.framesProcessed == 1)
        #expect(detector.processedDurationMs == 20)
        #expect(detector.currentLevel == 97)
        _ = detector.process([Float](repeating: 0, count: 960))
        #expect(detector.framesProcessed == 2)
        #expect(detector.currentLevel < 97)  // half a frame of tone, half silence
        _ = detector.process([Float](repeating: 0, count: 960))
        #expect(detector.currentLevel == 0)
        detector.reset()
        #expect(detector.framesProcessed == 0 && detector.currentLevel == 0 && detector.loudStreakMs == 0)
    }

    @Test("empty chunks are harmless")
    func empty() throws {
        var detector = try SoundDetector(configuration: .default, inputSampleRate: 48_000)
        #expect(detector.process([]).isEmpty)
        let none = [Int16]()[...]
        #expect(detector.process(int16: none.span).isEmpty)
        #expect(detector.process(int16: [Int16]()).isEmpty)
        #expect(detector.framesProcessed == 0)
    }
}
