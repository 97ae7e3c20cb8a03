import AudioCapture
import Foundation
import Media
import SoundDetection
import StreamMedia
import Synchronization
import TestSupport
import Testing

/// A monitor has one microphone: its live streams carry what the input publishes on its ``LiveAudioFeed`` (the
/// audio sound detection hears), not a second capture of the device.
@Suite("Streaming the shared microphone", .serialized, .heavy("capture and webrtcbin pipelines in real time"))
struct SharedMicrophoneStreamTests {
    @Test("a sender fed from the shared microphone streams that audio: the receiver records its 700 Hz tone")
    func senderStreamsTheFeed() async throws {
        let directory = try Subprocess.temporaryDirectory("media-feed")
        defer { try? FileManager.default.removeItem(at: directory) }
        let feed = LiveAudioFeed(sampleRate: 16_000)
        // The "microphone": 20 ms frames of a 700 Hz tone, paced by the clock on a thread of its own, like a device
        // (not on the cooperative pool, which a loaded machine may starve).
        let running = Atomic<Bool>(true)
        let microphone = Thread { [feed] in
            var next = ContinuousClock.now
            var index = 0
            while running.load(ordering: .acquiring) {
                next += .milliseconds(20)
                let wait = next - ContinuousClock.now
                if wait > .zero {
                    Thread.sleep(
                        forTimeInterval: Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18)
                }
                let frame = (0..<320).map { offset in
                    Float(0.4 * sin(2 * Double.pi * 700 * Double(index + offset) / 16_000))
                }
                index += 320
                feed.publish(.init(samples: frame, capturedAt: next))
            }
        }
        microphone.start()
        defer { running.store(false, ordering: .releasing) }
        let monitor = try GStreamerMediaEngine(
            configuration: .init(
                dtlsCertificate: try MediaTestSupport.certificate(), audioSource: .test(.cry), audioFeed: feed,
                iceAddresses: ["127.0.0.1"]
            )
        )
        let listener = try MediaTestSupport.receiverEngine(.record(try RecordingFiles(path: directory)))
        let (sender, receiver, senderEvents, receiverEvents) = try await LiveStreamTests.connect(
            monitor, listener, "feed-1"
        )
        #expect(feed.subscriberCount == 1, "the sender must subscribe to the feed")
        #expect(await receiverEvents.first(where: \.isFlowing) != nil, "no audio decoded: \(receiverEvents.events)")
        #expect(await senderEvents.first(where: \.isFlowing) != nil)
        try await Task.sleep(for: .milliseconds(2_200))
        await receiver.stop()
        await sender.stop()
        #expect(await MediaTestSupport.released(sender))
        #expect(await MediaTestSupport.released(receiver))
        #expect(feed.subscriberCount == 0, "an ended sender must leave the feed")

        let wav = try WAVRecording(
            contentsOf: directory.appendingPathComponent("feed-1.wav")
        )
        #expect(wav.duration >= 1.5, "recorded \(wav.duration) s")
        let tail = wav.samples.suffix(48_000)
        let frequency = WAVRecording.zeroCrossingFrequency(tail, sampleRate: 48_000)
        #expect(abs(frequency - 700) < 25, "frequency \(frequency) Hz: not the feed's tone (440 Hz is the own source)")
        let rms = WAVRecording.rms(tail)
        #expect(rms > 0.15 && rms < 0.5, "RMS \(rms)")
    }

    @Test("a receiver hands the decoded audio to a handler as it becomes due: the sender's 440 Hz tone")
    func receiverHandsSamplesToAHandler() async throws {
        let received = Mutex<(samples: [Float], calls: Int)>(([], 0))
        let monitor = try MediaTestSupport.senderEngine()
        let listener = try GStreamerMediaEngine(
            configuration: .init(
                dtlsCertificate: try MediaTestSupport.certificate(), iceAddresses: ["127.0.0.1"],
                receiverOutput: .samples(
                    .init { samples, _ in
                        received.withLock {
                            $0.samples += samples
                            $0.calls += 1
                        }
                    })
            )
        )
        // Both recorders must live: each forwards its peer's descriptions and candidates to the other.
        let (sender, receiver, senderEvents, receiverEvents) = try await LiveStreamTests.connect(
            monitor, listener, "samples-1"
        )
        #expect(await receiverEvents.first(where: \.isFlowing) != nil, "no audio decoded: \(receiverEvents.events)")
        #expect(await senderEvents.first(where: \.isFlowing) != nil)
        try await Task.sleep(for: .milliseconds(2_000))
        await receiver.stop()
        await sender.stop()
        #expect(await MediaTestSupport.released(receiver))
        let (samples, calls) = received.withLock { ($0.samples, $0.calls) }
        #expect(samples.count >= 48_000, "only \(samples.count) samples in 2 s")
        #expect(calls >= 40, "decoded audio should come in ~20 ms buffers, got \(calls) for \(samples.count) samples")
        let tail = samples.suffix(24_000)
        let frequency = WAVRecording.zeroCrossingFrequency(tail, sampleRate: 48_000)
        #expect(abs(frequency - 440) < 25, "frequency \(frequency) Hz")
        #expect(WAVRecording.rms(tail) > 0.15, "RMS \(WAVRecording.rms(tail))")
    }
}
