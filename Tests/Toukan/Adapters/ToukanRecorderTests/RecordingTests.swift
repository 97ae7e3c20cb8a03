import Foundation
import TestSupport
import Testing
import ToukanTestSupport

@testable import ToukanRecorder

/// Recordings of the built-in signals, read back by FFmpeg (PyAV): AAC-LC, 44.1 kHz, mono, the duration the
/// recorder reports, and the signal itself (not silence; the tone's frequency).
@Suite("Recording to fragmented AAC", .serialized, .heavy(cores: 0.5, "GStreamer capture and AAC encoding"))
struct RecordingTests {
    @Test("test:tone: a 440 Hz AAC-LC 44.1 kHz mono fragmented .m4a of the length recorded, metered at −15 dBFS")
    func tone() async throws {
        let directory = try scratchDirectory("tone")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("toukan_tone.m4a")
        let recorder = try ToukanRecorder(source: .tone, output: file)
        let events = recorder.events()
        let levelStream = recorder.levels()
        let levels = Task {
            var seen: [AudioLevel] = []
            for await level in levelStream { seen.append(level) }
            return seen
        }
        let summary = try await record(recorder, seconds: 3)
        #expect(summary.file == file)
        #expect(summary.gaps.isEmpty)
        #expect(summary.duration >= .seconds(3) && summary.duration < .seconds(4), "\(summary.duration)")
        #expect(recorder.state == .stopped)

        var received: [RecorderEvent] = []
        for await event in events { received.append(event) }
        #expect(received == [.started(file: file), .finished(summary)])

        // Five levels a second of a sine whose peak is 0.25 (−12 dBFS) and RMS 0.177 (−15 dBFS).
        let readings = await levels.value
        #expect(readings.count >= 14, "\(readings.count) levels for \(summary.duration)")
        for reading in readings.dropFirst() {
            #expect(abs(reading.peakDecibels - -12) < 1, "\(reading)")
            #expect(abs(reading.rmsDecibels - -15) < 1, "\(reading)")
        }

        let boxes = try topLevelBoxes(file)
        #expect(Array(boxes.prefix(2)) == ["ftyp", "moov"] && boxes.filter { $0 == "moof" }.count >= 5, "\(boxes)")
        let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600, "a recording is private")

        guard pyAVAvailable("the FFmpeg check of test:tone") else { return }
        let probe = try await RecordingProbe.read(file)
        #expect(probe.codecs == ["aac"])
        #expect(probe.profile == "LC")
        #expect(probe.sampleRate == 44_100)
        #expect(probe.channels == 1)
        #expect(abs(probe.seconds - summary.duration.seconds) < 0.2, "FFmpeg: \(probe.seconds) s, \(summary)")
        #expect(abs(probe.rms - 0.177) < 0.03, "\(probe)")
        #expect(abs(probe.frequency - 440) < 25, "\(probe)")
    }

    @Test("test:speech: espeak-ng's voice, recorded and decoded by FFmpeg as sound, not silence")
    func speech() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/espeak-ng") || InteropPeers.required else {
            FileHandle.standardError.write(
                Data("WARNING: SKIPPING test:speech: espeak-ng is not installed (make deps-test installs it)\n".utf8))
            return
        }
        let directory = try scratchDirectory("speech")
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = RecorderConfiguration()
        configuration.signalDirectory = directory.appendingPathComponent("signals")
        let file = directory.appendingPathComponent("speech.m4a")
        let summary = try await record(
            ToukanRecorder(source: .speech, output: file, configuration: configuration), seconds: 3)
        guard pyAVAvailable("the FFmpeg check of test:speech") else { return }
        let probe = try await RecordingProbe.read(file)
        #expect(probe.codecs == ["aac"] && probe.channels == 1 && probe.sampleRate == 44_100)
        #expect(abs(probe.seconds - summary.duration.seconds) < 0.2, "FFmpeg: \(probe.seconds) s, \(summary)")
        #expect(probe.rms > 0.01, "speech decoded as silence: \(probe)")
    }

    @Test(
        "refusals: an existing file is never overwritten, an absent device or directory fails the start and leaves no file"
    )
    func refusals() async throws {
        let directory = try scratchDirectory("refusals")
        defer { try? FileManager.default.removeItem(at: directory) }
        let existing = directory.appendingPathComponent("kept.m4a")
        try Data("an earlier recording".utf8).write(to: existing)
        await #expect(throws: RecorderError.self) {
            try await ToukanRecorder(source: .tone, output: existing).start()
        }
        #expect(try Data(contentsOf: existing) == Data("an earlier recording".utf8))

        let absent = directory.appendingPathComponent("absent.m4a")
        let recorder = try ToukanRecorder(source: RecordingSource(parsing: "alsa:hw:9"), output: absent)
        do {
            try await recorder.start()
            Issue.record("recording from a sound card that does not exist started")
        } catch {
            #expect(error.code == .inputUnavailable, "\(error)")
            #expect(error.message.contains("arecord -l"), "\(error.message)")
        }
        #expect(recorder.state == .failed)
        #expect(!FileManager.default.fileExists(atPath: absent.path), "a failed start leaves a file behind")
        do {
            _ = try await recorder.stop()
            Issue.record("a recorder that never started could be stopped")
        } catch {
            #expect(error.code == .inputUnavailable)
        }

        let nowhere = directory.appendingPathComponent("no/such/dir.m4a")
        do {
            try await ToukanRecorder(source: .tone, output: nowhere).start()
            Issue.record("a recording into a missing directory started")
        } catch {
            #expect(error.code == .outputUnwritable, "\(error)")
        }
        do {
            _ = try await ToukanRecorder(source: .tone, output: absent).stop()
            Issue.record("an idle recorder could be stopped")
        } catch {
            #expect(error.code == .notRecording)
        }
    }
}
