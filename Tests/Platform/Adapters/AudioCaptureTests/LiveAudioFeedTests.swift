import Foundation
import SoundDetection
import Synchronization
import TestSupport
import Testing

@testable import AudioCapture

/// One microphone, two consumers: sound detection gets 16 kHz chunks while live streams get the same audio at
/// 48 kHz from ``LiveAudioFeed``, buffer by buffer.
@Suite("Sharing the microphone")
struct LiveAudioFeedTests {
    /// Collects what a feed delivers until `count` samples arrived.
    final class Collector: Sendable {
        private let state = Mutex<(samples: [Float], frames: Int, times: [ContinuousClock.Instant])>(([], 0, []))
        var samples: [Float] { state.withLock { $0.samples } }
        var frames: Int { state.withLock { $0.frames } }
        var times: [ContinuousClock.Instant] { state.withLock { $0.times } }

        func add(_ frame: LiveAudioFeed.Frame) {
            state.withLock {
                $0.samples += frame.samples
                $0.frames += 1
                $0.times.append(frame.capturedAt)
            }
        }

        func wait(for count: Int, timeout: Duration = .seconds(10)) async {
            let deadline = ContinuousClock.now + timeout
            while samples.count < count, ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    @Test("a feed hands every frame to every subscriber, in order, until the subscription is cancelled")
    func fanOut() {
        let feed = LiveAudioFeed(sampleRate: 16_000)
        let first = Collector()
        let second = Collector()
        let now = ContinuousClock.now
        feed.publish(.init(samples: [0.5], capturedAt: now))  // nobody listens yet: dropped
        let a = feed.subscribe { first.add($0) }
        let b = feed.subscribe { second.add($0) }
        #expect(feed.subscriberCount == 2)
        feed.publish(.init(samples: [0.1, 0.2], capturedAt: now))
        feed.publish(.init(samples: [0.3], capturedAt: now))
        a.cancel()
        a.cancel()  // idempotent
        feed.publish(.init(samples: [0.4], capturedAt: now))
        #expect(first.samples == [0.1, 0.2, 0.3])
        #expect(second.samples == [0.1, 0.2, 0.3, 0.4])
        withExtendedLifetime(b) {}
        #expect(feed.subscriberCount == 1)
    }

    @Test("releasing a subscription unsubscribes it")
    func releaseUnsubscribes() {
        let feed = LiveAudioFeed(sampleRate: 48_000)
        do {
            let subscription = feed.subscribe { _ in }
            #expect(feed.subscriberCount == 1)
            withExtendedLifetime(subscription) {}
        }
        #expect(feed.subscriberCount == 0)
    }

    @Test("a GStreamer capture feeds streams the same file at 48 kHz while detection gets its 16 kHz chunks")
    func captureSharesItsAudio() async throws {
        let directory = try Subprocess.temporaryDirectory("shared-microphone")
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("tone.wav")
        try WAVFile.write(
            WAVFile.tone(frequency: 1_000, amplitude: 0.5, seconds: 0.5, sampleRate: 44_100, channels: 1),
            channels: 1, sampleRate: 44_100, to: url
        )
        let capture = try GStreamerAudioCapture(source: .file(path: url.path))
        let feed = try #require(capture.liveFeed)
        #expect(feed.sampleRate == 48_000)
        let streamed = Collector()
        let subscription = feed.subscribe { streamed.add($0) }
        let detected = try await collect(capture, samples: 19_200)  // 1.2 s for detection…
        await streamed.wait(for: 52_800)  // …and as much for streams
        subscription.cancel()
        try await waitUntilReleased(capture)

        #expect(detected.count >= 19_200)
        let samples = streamed.samples
        try #require(samples.count >= 52_800, "the feed delivered \(samples.count) samples")
        // 1 kHz at 48 kHz: 2000 sign changes in a second (6000 if it were still 16 kHz).
        let second = samples[4_800..<52_800]
        #expect((1_950...2_050).contains(zeroCrossings(second)), "\(zeroCrossings(second)) sign changes in 1 s")
        #expect(abs(rms(second) - Float(0.5 / 2.0.squareRoot())) < 0.03, "RMS \(rms(second))")
        // Buffers arrive as the source delivers them (tens of ms from this file), not in detection's 100 ms chunks.
        #expect(streamed.frames >= 15, "only \(streamed.frames) frames for \(samples.count) samples")
        #expect(zip(streamed.times, streamed.times.dropFirst()).allSatisfy { $0 <= $1 })
    }

    @Test("test signals feed streams the samples detection hears, every 20 ms")
    func testSignalSharesItsAudio() async throws {
        let input = TestSignalInput(.cry)
        let feed = try #require(input.liveFeed)
        #expect(feed.sampleRate == TestAudioSource.sampleRate)
        let streamed = Collector()
        let subscription = feed.subscribe { streamed.add($0) }
        var detected: [Float] = []
        for try await chunk in input.chunks() {
            detected += chunk
            if detected.count >= 4_800 { break }
        }
        await input.stop()
        subscription.cancel()
        let samples = streamed.samples
        #expect(samples.count >= 4_800)
        #expect(Array(samples.prefix(4_800)) == Array(detected.prefix(4_800)))
        #expect(streamed.frames >= 15)
    }
}
