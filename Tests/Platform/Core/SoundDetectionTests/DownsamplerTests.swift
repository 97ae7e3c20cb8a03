import SoundDetection
import TestSupport
import Testing

@Suite("48 kHz input")
struct DownsamplerTests {
    private let segments: [TestSignal.Segment] = [
        .init(durationMs: 1000, amplitude: 0),
        .init(durationMs: 1000, amplitude: 0.5),
        .init(durationMs: 3000, amplitude: 0),
        .init(durationMs: 700, amplitude: 0.3),  // inside the cooldown: suppressed
        .init(durationMs: 12_000, amplitude: 0),
        .init(durationMs: 2500, amplitude: 0.2),
        .init(durationMs: 1000, amplitude: 0),
    ]

    @Test("the same signal at 48 kHz and 16 kHz gives the same events within a frame")
    func sameEvents() throws {
        let at16k = try DetectorRun.run(TestSignal.gatedTone(sampleRate: 16_000, segments: segments))
        let at48k = try DetectorRun.run(
            TestSignal.gatedTone(sampleRate: 48_000, segments: segments),
            sampleRate: 48_000
        )
        #expect(at16k.events.map(\.offsetMs) == [1600, 18_300])
        #expect(at48k.levels.count == at16k.levels.count)
        #expect(at48k.events.count == at16k.events.count)
        for (slow, fast) in zip(at16k.events, at48k.events) {
            #expect(abs(slow.offsetMs - fast.offsetMs) <= 20)
            #expect(abs(slow.peakLevel - fast.peakLevel) <= 1)
            #expect(abs(slow.durationMs - fast.durationMs) <= 20)
        }
    }

    @Test("a 1 kHz tone passes: level within 1 of the 16 kHz level")
    func passband() throws {
        for amplitude in [1.0, 0.5, 0.05, 0.005] {
            let slow = try DetectorRun.run(TestSignal.sine(amplitude: amplitude, durationMs: 1000, sampleRate: 16_000))
            let fast = try DetectorRun.run(
                TestSignal.sine(amplitude: amplitude, durationMs: 1000, sampleRate: 48_000),
                sampleRate: 48_000
            )
            // Skip the first frame: the filter starts from silence.
            for (expected, measured) in zip(slow.levels.dropFirst(), fast.levels.dropFirst()) {
                #expect(abs(expected - measured) <= 1)
            }
        }
    }

    @Test("a 20 kHz tone is removed (it would alias to 4 kHz without the filter)")
    func stopband() throws {
        let samples = TestSignal.sine(frequency: 20_000, amplitude: 0.5, durationMs: 1000, sampleRate: 48_000)
        let filtered = try DetectorRun.run(samples, sampleRate: 48_000)
        #expect(filtered.levels.count == 50)
        #expect(filtered.levels.dropFirst().allSatisfy { $0 <= 10 })  // unfiltered it reads 90
        #expect(filtered.events.isEmpty)
        // Naive decimation (every third sample) keeps the full level: the filter is what removes it.
        let naive = stride(from: 0, to: samples.count, by: 3).map { samples[$0] }
        #expect(try DetectorRun.run(naive).levels.dropFirst().allSatisfy { $0 >= 88 })
    }

    @Test("the taps are symmetric with unity DC gain, and a DC input settles at 1")
    func taps() {
        let taps = Downsampler48kTo16k.taps
        #expect(taps.count == 63)
        for index in 0..<taps.count {
            #expect(taps[index] == taps[taps.count - 1 - index])
        }
        #expect(abs(taps.reduce(0, +) - 1) < 1e-5)
        var downsampler = Downsampler48kTo16k()
        var output: [Float] = []
        downsampler.process([Float](repeating: 1, count: 300), into: &output)
        #expect(output.count == 100)
        #expect(abs(output[0] - taps[0]) < 1e-7)  // only x[0] is inside the first window
        #expect(output[21...].allSatisfy { abs($0 - 1) < 1e-5 })
    }

    @Test("output is bit-identical however the input is chunked", arguments: [1, 2, 5, 62, 63, 64, 100, 4801])
    func chunking(chunkSize: Int) {
        var generator = SplitMix64(seed: 42)
        let input = (0..<10_000).map { _ in generator.nextSigned() }
        var whole = Downsampler48kTo16k()
        var expected: [Float] = []
        whole.process(input, into: &expected)
        #expect(expected.count == 3334)
        var chunked = Downsampler48kTo16k()
        var output: [Float] = []
        var start = 0
        while start < input.count {
            let end = min(start + chunkSize, input.count)
            chunked.process(Array(input[start..<end]), into: &output)
            start = end
        }
        #expect(output == expected)
    }
}
