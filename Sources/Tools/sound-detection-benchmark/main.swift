// Benchmark harness for the SoundDetection pipeline (downsample + frame levels + detection).
//
// Generates 10 minutes of deterministic, seeded mono audio (background noise plus a 2 s "cry" burst every 15 s),
// runs the full pipeline several times for 48 kHz Float, 48 kHz Int16 and 16 kHz Float input on one thread,
// and prints the wall time and the throughput as a multiple of real time per core. The detected event count
// is printed so the work cannot be optimised away. Holds no detection logic.

import Foundation
import SoundDetection

let audioSeconds = 600
let timedRuns = 5
let chunkMilliseconds = 20
let burstPeriodSeconds = 15
let burstSeconds = 2

/// SplitMix64 step: advances `state` and returns the next 64 pseudo-random bits.
func nextRandom(_ state: inout UInt64) -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var mixed = state
    mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
    mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
    return mixed ^ (mixed >> 31)
}

/// Renders the benchmark signal at `sampleRate`: uniform noise at −50 dBFS plus a 2 s harmonic tone
/// (450 Hz fundamental with decaying harmonics, amplitude wobbling at 3 Hz) every 15 s.
func makeSignal(sampleRate: Int, seed: UInt64) -> [Float] {
    var state = seed
    let count = audioSeconds * sampleRate
    let burstStart = 3 * sampleRate
    let period = burstPeriodSeconds * sampleRate
    let burstLength = burstSeconds * sampleRate
    var samples = [Float](repeating: 0, count: count)
    let twoPi = 2 * Double.pi
    for index in 0..<count {
        let noise = Float(Int64(bitPattern: nextRandom(&state)) >> 40) / Float(1 << 23)  // −1..<1
        var value = 0.0055 * noise
        let position = (index - burstStart) % period
        if index >= burstStart, position < burstLength {
            let time = Double(index) / Double(sampleRate)
            let envelope = 0.25 * (1 + 0.3 * sin(twoPi * 3 * time))
            let tone = sin(twoPi * 450 * time) + 0.5 * sin(twoPi * 900 * time) + 0.25 * sin(twoPi * 1350 * time)
            value += Float(envelope * tone)
        }
        samples[index] = value
    }
    return samples
}

/// Seconds in a `Duration`.
func seconds(_ duration: Duration) -> Double {
    let parts = duration.components
    return Double(parts.seconds) + Double(parts.attoseconds) * 1e-18
}

/// `1234567` → `"1,234,567"`.
func grouped(_ value: Int) -> String {
    let digits = String(value.magnitude)
    var result = ""
    for (offset, digit) in digits.enumerated() {
        if offset > 0, (digits.count - offset) % 3 == 0 {
            result.append(",")
        }
        result.append(digit)
    }
    return value < 0 ? "-" + result : result
}

struct Measurement {
    var name: String
    var samples: Int
    var events: Int
    var medianSeconds: Double
    var bestSeconds: Double
    var realTimeFactor: Double { Double(audioSeconds) / medianSeconds }
}

/// Runs `body` once to warm up and `timedRuns` times timed; `body` returns the number of events detected.
func measure(name: String, samples: Int, _ body: () -> Int) -> Measurement {
    let clock = ContinuousClock()
    let expectedEvents = body()
    var times: [Double] = []
    for _ in 0..<timedRuns {
        var events = 0
        let elapsed = clock.measure { events = body() }
        precondition(events == expectedEvents, "non-deterministic event count")
        times.append(seconds(elapsed))
    }
    times.sort()
    return Measurement(
        name: name,
        samples: samples,
        events: expectedEvents,
        medianSeconds: times[times.count / 2],
        bestSeconds: times[0]
    )
}

/// Feeds `signal` to a fresh detector in chunks of `chunk` samples and returns the number of events.
func runFloat(_ signal: [Float], sampleRate: Int, chunk: Int) -> Int {
    var detector = try! SoundDetector(configuration: .default, inputSampleRate: sampleRate)
    var events = 0
    var levelChecksum = 0
    var start = 0
    while start < signal.count {
        let end = min(start + chunk, signal.count)
        let slice = signal[start..<end]
        events += detector.process(slice.span).count
        levelChecksum &+= detector.currentLevel
        start = end
    }
    precondition(levelChecksum > 0)
    return events
}

/// Same as `runFloat` for Int16 input.
func runInt16(_ signal: [Int16], sampleRate: Int, chunk: Int) -> Int {
    var detector = try! SoundDetector(configuration: .default, inputSampleRate: sampleRate)
    var events = 0
    var start = 0
    while start < signal.count {
        let end = min(start + chunk, signal.count)
        let slice = signal[start..<end]
        events += detector.process(int16: slice.span).count
        start = end
    }
    return events
}

let clock = ContinuousClock()
var signal48k: [Float] = []
var signal16k: [Float] = []
let generation = clock.measure {
    signal48k = makeSignal(sampleRate: 48_000, seed: 0xC1B_CA11)
    signal16k = makeSignal(sampleRate: 16_000, seed: 0xC1B_CA11)
}
let pcm48k = signal48k.map { Int16(max(-32_768, min(32_767, ($0 * 32_768).rounded()))) }
print(
    "sound-detection benchmark: \(audioSeconds) s of seeded audio (noise + \(burstSeconds) s burst every "
        + "\(burstPeriodSeconds) s), \(chunkMilliseconds) ms chunks, default configuration, "
        + "median of \(timedRuns) runs after 1 warm-up (generated in \(String(format: "%.2f", seconds(generation))) s)")

let chunk48k = 48 * chunkMilliseconds
let chunk16k = 16 * chunkMilliseconds
let results = [
    measure(name: "48 kHz Float pipeline", samples: signal48k.count) {
        runFloat(signal48k, sampleRate: 48_000, chunk: chunk48k)
    },
    measure(name: "48 kHz Int16 pipeline", samples: pcm48k.count) {
        runInt16(pcm48k, sampleRate: 48_000, chunk: chunk48k)
    },
    measure(name: "16 kHz Float pipeline", samples: signal16k.count) {
        runFloat(signal16k, sampleRate: 16_000, chunk: chunk16k)
    },
]

for result in results {
    let factor = grouped(Int(result.realTimeFactor.rounded()))
    print(
        "\(result.name): \(factor)× real time per core — \(grouped(result.samples)) samples in "
            + String(
                format: "%.3f s (best %.3f s, %.1f M samples/s), %d events",
                result.medianSeconds, result.bestSeconds,
                Double(result.samples) / result.medianSeconds / 1e6, result.events))
}

func field(_ result: Measurement, _ key: String) -> String {
    "\"\(key)\":"
        + String(
            format: "{\"samples\":%d,\"seconds\":%.4f,\"realtime\":%.0f,\"events\":%d}",
            result.samples, result.medianSeconds, result.realTimeFactor, result.events)
}
print(
    "{\"event\":\"benchmark\",\"name\":\"sound-detection\",\"audioSeconds\":\(audioSeconds),\"runs\":\(timedRuns),"
        + "\"chunkMs\":\(chunkMilliseconds),"
        + field(results[0], "float48k") + "," + field(results[1], "int16_48k") + "," + field(results[2], "float16k")
        + "}")
