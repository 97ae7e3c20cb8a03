import AudioCapture
import Foundation
import Synchronization
import TestSupport
import Testing
import ToukanCore
import ToukanTestSupport

@testable import ToukanRecorder

/// A lost input (an unplugged microphone) pauses the recording, the recorder reopens it, and the audio continues in
/// the same file; the lost time is a ``Gap`` marker, not silence in the file.
@Suite("Losing the input", .serialized, .heavy(cores: 0.25, "AAC encoding of a scripted input"))
struct InputLossTests {
    @Test("unplugged after 1 s, still absent at the first retry, back at the second: one gap, one continuous file")
    func pauseAndResume() async throws {
        let directory = try scratchDirectory("loss")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("toukan_loss.m4a")
        var configuration = RecorderConfiguration()
        configuration.retryInterval = .milliseconds(200)
        let openings = Atomic<Int>(0)
        let recorder = ToukanRecorder(source: .tone, output: file, configuration: configuration) {
            () throws(RecorderError) -> any AudioInput in
            switch openings.add(1, ordering: .relaxed).newValue {
            case 1: return ScriptedMicrophone(unpluggedAfter: .seconds(1))
            case 2: throw RecorderError(code: .inputUnavailable, message: "the test microphone is still unplugged")
            default: return ScriptedMicrophone(unpluggedAfter: nil)
            }
        }
        let events = recorder.events()
        try await recorder.start()
        try await eventually("the audio to resume after the loss", timeout: .seconds(60)) {
            !recorder.gaps.isEmpty
        }
        let resumedAt = recorder.elapsed
        try await eventually("1 s more recorded after the gap", timeout: .seconds(60)) {
            recorder.elapsed >= resumedAt + .seconds(1)
        }
        let summary = try await recorder.stop()

        let gap = try #require(summary.gaps.first)
        #expect(summary.gaps.count == 1, "\(summary.gaps)")
        // 50 frames of 20 ms were delivered before the plug was pulled.
        #expect(gap.start == 1, "\(gap)")
        #expect(gap.length >= 0.35, "two retries 200 ms apart, yet the gap is \(gap.length) s")
        #expect(gap.reason?.contains("unplugged") == true, "\(gap)")
        #expect(openings.load(ordering: .relaxed) == 3)

        var received: [RecorderEvent] = []
        for await event in events { received.append(event) }
        #expect(
            received == [
                .started(file: file), .paused(at: .seconds(1), reason: gap.reason ?? ""), .resumed(gap),
                .finished(summary),
            ])

        guard pyAVAvailable("the FFmpeg check of a recording with a gap") else { return }
        let probe = try await RecordingProbe.read(file)
        // The file holds the audio only: the gap's time is not filled with silence.
        #expect(abs(probe.seconds - summary.duration.seconds) < 0.2, "FFmpeg: \(probe.seconds) s, \(summary)")
        #expect(abs(probe.frequency - 440) < 25, "\(probe)")
    }
}

/// The same through a real sound server: `toukan-record-probe` records a private PulseAudio's microphone (a
/// null sink's monitor hearing a 440 Hz tone) while that server is killed and started again.
@Suite("Losing the sound server", .serialized, .heavy(cores: 0.5, "a recorder process and a PulseAudio server"))
struct SoundServerLossTests {
    @Test("PulseAudio killed mid-recording and restarted: paused, resumed in the same file, one gap, no silence")
    func pulseAudioRestart() async throws {
        guard let pulse = try await PulseAudioServer.start(for: "the PulseAudio restart test") else { return }
        let directory = try scratchDirectory("pulse")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("toukan_pulse.m4a")
        let probe = try BackgroundProcess(
            try Subprocess.builtProduct("toukan-record-probe"),
            ["pulse:\(PulseAudioServer.microphone)", file.path, "--seconds", "5"], environment: pulse.environment)
        defer { Task { await probe.stop() } }
        try await probe.ready("toukan-record-probe") { $0.contains(#""event":"started""#) }
        func event(_ name: String) -> (String) -> Bool { { $0.contains(#""event":"\#(name)""#) } }
        func elapsed(_ line: String) -> Double {
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["seconds"] as? Double ?? 0
        }
        let heard = await probe.line(timeout: .seconds(60)) { event("elapsed")($0) && elapsed($0) >= 1.5 }
        #expect(heard != nil, "1.5 s recorded from PulseAudio; stderr: \(probe.errorOutput.suffix(2_000))")

        await pulse.kill()
        let paused = await probe.line(timeout: .seconds(30), where: event("paused"))
        #expect(
            paused?.contains("the PulseAudio server stopped while recording") == true,
            "the loss is reported: \(paused ?? "nothing")")
        let outage = ContinuousClock.now
        try await Task.sleep(for: .seconds(1.5))
        try await pulse.restart()
        let resumed = try #require(
            await probe.line(timeout: .seconds(60), where: event("resumed")), "\(probe.errorOutput.suffix(2_000))")
        let downFor = ContinuousClock.now - outage
        let finished = try #require(await probe.line(timeout: .seconds(60), where: event("finished")))
        #expect(await probe.waitForExit() == 0)
        await pulse.stop()

        func number(_ line: String, _ key: String) -> Double? {
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?[key] as? Double
        }
        let gapLength = try #require(number(resumed, "length"))
        #expect(gapLength >= 1.5, "the gap covers the outage: \(resumed)")
        #expect(gapLength <= (downFor + .seconds(2)).seconds, "and not much more: \(resumed), down for \(downFor)")
        #expect(probe.output.filter(event("paused")).count == 1, "one loss: \(probe.output.filter(event("paused")))")
        let recorded = try #require(number(finished, "seconds"))

        guard pyAVAvailable("the FFmpeg check of a recording across a PulseAudio restart") else { return }
        let read = try await RecordingProbe.read(file)
        // The file holds what was heard, before and after; the outage is not filled with silence.
        #expect(abs(read.seconds - recorded) < 0.3, "FFmpeg: \(read.seconds) s, recorded \(recorded) s")
        #expect(abs(read.frequency - Double(PulseAudioServer.toneFrequency)) < 25, "\(read)")
        #expect(read.rms > 0.01, "the tone, not silence: \(read)")
    }
}

/// A microphone twin: a 440 Hz tone at 16 kHz in 20 ms frames paced by the clock, which fails like an unplugged
/// device after `unpluggedAfter` (never if nil).
final class ScriptedMicrophone: AudioInput {
    private let feed = LiveAudioFeed(sampleRate: 16_000)
    private let unpluggedAfter: Duration?
    private let producer = Mutex<Task<Void, Never>?>(nil)

    var liveFeed: LiveAudioFeed? { feed }

    init(unpluggedAfter: Duration?) {
        self.unpluggedAfter = unpluggedAfter
    }

    func chunks() -> AsyncThrowingStream<[Float], any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: [Float].self)
        let feed = feed
        let unpluggedAfter = unpluggedAfter
        let task = Task {
            let clock = ContinuousClock()
            let start = clock.now
            var deadline = start + .milliseconds(20)
            var index = 0
            while !Task.isCancelled {
                do { try await clock.sleep(until: deadline) } catch { break }
                if let unpluggedAfter, deadline - start > unpluggedAfter {
                    continuation.finish(
                        throwing: AudioCaptureError(
                            code: .deviceUnavailable, message: "the test microphone was unplugged"))
                    return
                }
                let frame = (0..<320).map { offset in
                    Float(0.25 * sin(2 * Double.pi * 440 * Double(index + offset) / 16_000))
                }
                index += 320
                feed.publish(LiveAudioFeed.Frame(samples: frame, capturedAt: deadline))
                continuation.yield(frame)
                deadline += .milliseconds(20)
            }
            continuation.finish()
        }
        producer.withLock { $0 = task }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    func stop() async {
        let task = producer.withLock { $0 }
        task?.cancel()
        await task?.value
    }
}
