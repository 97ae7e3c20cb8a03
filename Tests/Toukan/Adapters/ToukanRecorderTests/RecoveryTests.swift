import Foundation
import TestSupport
import Testing
import ToukanTestSupport

@testable import ToukanRecorder

#if canImport(Glibc)
    import Glibc
#endif

/// What a recorder that did not stop leaves behind, and ``ToukanRecorder/recover(_:to:)`` turning it into a normal
/// .m4a that FFmpeg reads: after `kill -9`, with a torn last fragment, after the disk filled up.
@Suite("Recovering interrupted recordings", .serialized, .heavy(cores: 0.5, "a recorder process and remuxing"))
struct RecoveryTests {
    @Test("kill -9 of a recording process: the recovered file holds the time recorded, within 1 s")
    func killed() async throws {
        let directory = try scratchDirectory("killed")
        defer { try? FileManager.default.removeItem(at: directory) }
        let partial = directory.appendingPathComponent("toukan_killed.m4a")
        let probe = try BackgroundProcess(
            try Subprocess.builtProduct("toukan-record-probe"), ["test:tone", partial.path])
        try await probe.ready("toukan-record-probe") { $0.contains(#""event":"started""#) }
        let recorded = try #require(
            await probe.line(timeout: .seconds(60)) { (Self.elapsed(in: $0) ?? 0) >= 3 },
            "the probe did not record 3 s: \(probe.errorOutput)")
        Glibc.kill(probe.processIdentifier, SIGKILL)
        #expect(await probe.waitForExit(timeout: .seconds(30)) != nil)
        // The last elapsed time the recorder reported before it died.
        let seconds = probe.output.compactMap(Self.elapsed(in:)).last ?? 0
        #expect(seconds >= 3, "\(recorded)")

        let recovered = directory.appendingPathComponent("toukan_recovered.m4a")
        let duration = try await ToukanRecorder.recover(partial, to: recovered).seconds
        #expect(abs(duration - seconds) < 1, "recovered \(duration) s of \(seconds) s recorded")
        #expect(try topLevelBoxes(recovered).filter { $0 == "moof" }.isEmpty, "the recovered file is not fragmented")
        guard pyAVAvailable("the FFmpeg check of a recovered recording") else { return }
        let read = try await RecordingProbe.read(recovered)
        #expect(read.codecs == ["aac"] && read.sampleRate == 44_100 && read.channels == 1)
        #expect(abs(read.seconds - seconds) < 1, "FFmpeg reads \(read.seconds) s of \(seconds) s recorded")
        #expect(abs(read.frequency - 440) < 25, "\(read)")
    }

    @Test("a last fragment torn in the middle is dropped; every complete fragment is kept")
    func tornFragment() async throws {
        let directory = try scratchDirectory("torn")
        defer { try? FileManager.default.removeItem(at: directory) }
        let complete = directory.appendingPathComponent("complete.m4a")
        let summary = try await record(ToukanRecorder(source: .tone, output: complete), seconds: 2)
        let bytes = try Data(contentsOf: complete)
        let torn = directory.appendingPathComponent("torn.m4a")
        // The finished file ends with its last mdat and an mfra index; cutting 2,500 bytes tears the last mdat.
        try bytes.prefix(bytes.count - 2_500).write(to: torn)
        let recovered = directory.appendingPathComponent("recovered.m4a")
        let duration = try await ToukanRecorder.recover(torn, to: recovered)
        #expect(duration < summary.duration, "nothing was dropped: \(duration) of \(summary.duration)")
        #expect(duration > summary.duration - .seconds(1), "more than a fragment lost: \(duration) of \(summary)")
        guard pyAVAvailable("the FFmpeg check of a torn recording") else { return }
        let read = try await RecordingProbe.read(recovered)
        #expect(abs(read.seconds - duration.seconds) < 0.2, "FFmpeg reads \(read.seconds) s, recovery says \(duration)")
    }

    @Test("a file with no audio is refused and leaves nothing behind")
    func unrecoverable() async throws {
        let directory = try scratchDirectory("garbage")
        defer { try? FileManager.default.removeItem(at: directory) }
        for (name, content) in [("empty.m4a", Data()), ("text.m4a", Data("not a recording at all".utf8))] {
            let partial = directory.appendingPathComponent(name)
            try content.write(to: partial)
            let output = directory.appendingPathComponent("recovered-\(name)")
            do {
                let duration = try await ToukanRecorder.recover(partial, to: output)
                Issue.record("recovered \(duration) from \(name)")
            } catch {
                #expect(error.code == .unrecoverable, "\(name): \(error)")
            }
            #expect(!FileManager.default.fileExists(atPath: output.path))
        }
    }

    @Test("a full disk ends the recording with diskFull; what was written is recovered")
    func diskFull() async throws {
        let directory = try scratchDirectory("full")
        defer { try? FileManager.default.removeItem(at: directory) }
        let small = directory.appendingPathComponent("small")
        try FileManager.default.createDirectory(at: small, withIntermediateDirectories: true)
        // A 32 KiB tmpfs fills after about 3 s of audio. Needs root (make test runs as root).
        let mounted = try await Subprocess.run("mount", ["-t", "tmpfs", "-o", "size=32k", "tmpfs", small.path])
        guard mounted.status == 0 else {
            FileHandle.standardError.write(
                Data("WARNING: SKIPPING the full-disk test: cannot mount a tmpfs (\(mounted.stderrText))\n".utf8))
            return
        }
        defer { _ = try? Subprocess.runBlocking("umount", [small.path]) }
        let file = small.appendingPathComponent("toukan_full.m4a")
        let recorder = try ToukanRecorder(source: .tone, output: file)
        let events = recorder.events()
        try await recorder.start()
        let failure = try await withTimeout(.seconds(60), "the recording to fail on a full disk") {
            () -> RecorderError? in
            for await event in events { if case .failed(let error) = event { return error } }
            return nil
        }
        #expect(failure?.code == .diskFull, "\(String(describing: failure))")
        #expect(recorder.state == .failed)
        let recovered = directory.appendingPathComponent("recovered.m4a")
        let duration = try await ToukanRecorder.recover(file, to: recovered)
        #expect(duration > .seconds(1), "recovered \(duration)")
    }

    /// The `seconds` of an `elapsed` line of the probe.
    static func elapsed(in line: String) -> Double? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            object["event"] as? String == "elapsed"
        else { return nil }
        return object["seconds"] as? Double
    }
}
