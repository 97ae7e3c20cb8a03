import AudioCapture
import BenchmarkSupport
import Foundation
import Synchronization

/// The benchmark's microphone: a live 48 kHz feed of faint room noise, published in 10 ms frames paced by the
/// clock like a sound card, with a 10 ms 1 kHz click every ``period``. Each click's capture time (its first
/// sample, i.e. one frame before the frame is delivered) goes to `onClick`, in CLOCK_MONOTONIC nanoseconds.
final class ClickTrack: Sendable {
    static let sampleRate = 48_000
    static let frameSamples = 480
    static let period = Duration.milliseconds(600)

    let feed = LiveAudioFeed(sampleRate: ClickTrack.sampleRate)
    private let running = Atomic<Bool>(false)
    private let onClick: @Sendable (Int64) -> Void

    init(onClick: @escaping @Sendable (Int64) -> Void = { _ in }) {
        self.onClick = onClick
    }

    func start() {
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let thread = Thread { [self] in run() }
        thread.name = "bench.microphone"
        thread.start()
    }

    func stop() {
        running.store(false, ordering: .releasing)
    }

    private func run() {
        let frameNanoseconds = Int64(Self.frameSamples) * 1_000_000_000 / Int64(Self.sampleRate)
        let framesPerClick = Int(milliseconds(Self.period)) * Self.sampleRate / 1000 / Self.frameSamples
        var noise: UInt64 = 0x9E37_79B9_7F4A_7C15
        var deadline = monotonicNanoseconds() + frameNanoseconds
        var frame = 0
        while running.load(ordering: .acquiring) {
            sleep(until: deadline)
            var samples = [Float](repeating: 0, count: Self.frameSamples)
            for index in samples.indices {
                noise ^= noise << 13
                noise ^= noise >> 7
                noise ^= noise << 17
                samples[index] = (Float(noise >> 40) / Float(1 << 24) - 0.5) * 0.004
            }
            let click = frame % framesPerClick == framesPerClick - 1
            if click {
                for index in samples.indices {
                    samples[index] += 0.6 * Float(sin(2 * Double.pi * 1_000 * Double(index) / Double(Self.sampleRate)))
                }
            }
            feed.publish(LiveAudioFeed.Frame(samples: samples, capturedAt: .now))
            if click { onClick(deadline - frameNanoseconds) }
            deadline += frameNanoseconds
            frame += 1
        }
    }

    private func sleep(until deadline: Int64) {
        var time = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &time, nil) == EINTR {}
    }
}

/// Finds clicks in decoded audio as it reaches the "speaker": the first sample over the threshold after at least
/// 300 ms below it. Reports its time (CLOCK_MONOTONIC nanoseconds: when its buffer was due plus its offset).
final class OnsetDetector: Sendable {
    private struct State {
        var quietSamples = Int.max
    }

    private let state = Mutex(State())
    private let onOnset: @Sendable (Int64) -> Void
    private static let threshold: Float = 0.25
    private static let rearmSamples = ClickTrack.sampleRate * 3 / 10

    init(onOnset: @escaping @Sendable (Int64) -> Void) {
        self.onOnset = onOnset
    }

    func process(_ samples: [Float]) {
        let due = monotonicNanoseconds()
        var onset: Int?
        state.withLock { state in
            for (index, sample) in samples.enumerated() {
                if abs(sample) >= Self.threshold {
                    if state.quietSamples >= Self.rearmSamples, onset == nil { onset = index }
                    state.quietSamples = 0
                } else if state.quietSamples < Int.max {
                    state.quietSamples += 1
                }
            }
        }
        if let onset { onOnset(due + Int64(onset) * 1_000_000_000 / Int64(ClickTrack.sampleRate)) }
    }
}
