import CribCallProtocol
import Foundation
import StreamMedia
import Synchronization
import TestSupport
import Testing

@testable import Media

#if canImport(Glibc)
    import Glibc
#endif

/// `cribcall listen --record PATH`: which file each stream gets (``RecordingFiles``), and what a Matroska recording
/// holds as FFmpeg (PyAV, `Tests/Interop/media/mkv_probe.py`) reads it — an implementation independent of the
/// GStreamer that wrote it.
@Suite("Recording streams", .heavy(cores: 0.5, "live streams recorded to Matroska, read back by FFmpeg"))
struct RecordingTests {
    // MARK: - File names

    @Test("a file path: the first stream gets it, the next ones NAME-2, NAME-3; an existing file is never touched")
    func numberedFiles() throws {
        let directory = try Subprocess.temporaryDirectory("recording-names")
        defer { try? FileManager.default.removeItem(at: directory) }
        let existing = directory.appendingPathComponent("night-2.mkv")
        try Data("keep me".utf8).write(to: existing)
        let announced = Announcements()
        let files = try RecordingFiles(path: directory.appendingPathComponent("night.mkv")) { session, file in
            announced.append("\(session) \(file.lastPathComponent)")
        }
        #expect(files.format == .matroska)
        let names = try ["a", "b", "c"].map { try files.create(sessionId: $0).lastPathComponent }
        #expect(names == ["night.mkv", "night-3.mkv", "night-4.mkv"])
        #expect(try Data(contentsOf: existing) == Data("keep me".utf8))
        #expect(announced.lines == ["a night.mkv", "b night-3.mkv", "c night-4.mkv"])
        for name in names {
            let mode = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent(name).path)
            #expect((mode[.posixPermissions] as? NSNumber)?.intValue == 0o600, "\(name) must be private")
        }
    }

    @Test("a directory: one WAV per stream, named after its session id with only safe characters")
    func directoryOfWAVs() throws {
        let directory = try Subprocess.temporaryDirectory("recording-directory")
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = try RecordingFiles(path: directory)
        #expect(files.format == .wav)
        let names = try ["../../etc/x", "ab-1_Z", "", "ab-1_Z"].map {
            try files.create(sessionId: $0).lastPathComponent
        }
        #expect(names == ["______etc_x.wav", "ab-1_Z.wav", "stream.wav", "ab-1_Z-2.wav"])
        #expect(!FileManager.default.fileExists(atPath: "/etc/x.wav"))
    }

    @Test("an unknown extension or a missing directory is refused with what to give instead")
    func refusals() throws {
        let directory = try Subprocess.temporaryDirectory("recording-refusals")
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect {
            try RecordingFiles(path: directory.appendingPathComponent("night.mp4"))
        } throws: { error in
            (error as? MediaError)?.message.contains(".wav (audio) or .mkv (audio and video)") == true
        }
        #expect {
            try RecordingFiles(path: directory.appendingPathComponent("missing/night.wav"))
        } throws: { error in
            (error as? MediaError)?.message.contains("does not exist") == true
        }
        #expect(try RecordingFiles(path: directory.appendingPathComponent("NIGHT.WAV")).format == .wav)
    }

    // MARK: - Matroska, read by FFmpeg

    @Test(
        "an audio_video stream recorded to .mkv as received: FFmpeg decodes the Opus tone and the video frames",
        arguments: [GStreamerMediaEngine.VideoCodec.h264, .vp8]
    )
    func matroskaAudioVideo(codec: GStreamerMediaEngine.VideoCodec) async throws {
        guard InteropPeers.pythonAvailable(for: "Matroska recording (PyAV)") else { return }
        let directory = try Subprocess.temporaryDirectory("recording-mkv")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("nursery.mkv")
        let monitor = try VideoStreamTests.monitorEngine(.test, codec: codec)
        let listener = try GStreamerMediaEngine(
            configuration: .init(
                dtlsCertificate: try MediaTestSupport.certificate(), iceAddresses: ["127.0.0.1"],
                receiverOutput: .record(try RecordingFiles(path: file))
            )
        )
        let (sender, receiver, senderEvents, receiverEvents) = try await VideoStreamTests.connect(
            monitor, listener, "mkv-\(codec)"
        )
        #expect(await receiverEvents.first(where: \.isFlowing) != nil, "no audio: \(receiverEvents.events)")
        let peer = try #require(receiver as? GStreamerMediaPeer)
        #expect(await VideoStreamTests.decodedFrames(peer, atLeast: 30, within: .seconds(20)) >= 30)
        try await Task.sleep(for: .seconds(1))
        await receiver.stop()
        await sender.stop()
        #expect(await senderEvents.finished())
        #expect(await MediaTestSupport.released(receiver))

        let probe = try await Self.probe(file)
        let streams = probe["streams"] as? [[String: String]] ?? []
        let expectedVideo = codec == .h264 ? "h264" : "vp8"
        #expect(
            streams.map { [$0["type"] ?? "", $0["codec"] ?? ""] } == [["audio", "opus"], ["video", expectedVideo]],
            "\(probe)")
        let audio = probe["audio"] as? [String: Any] ?? [:]
        #expect((audio["seconds"] as? Double ?? 0) >= 2, "\(audio)")
        #expect(audio["sample_rate"] as? Int == 48_000)
        let frequency = audio["frequency"] as? Double ?? 0
        #expect(abs(frequency - 440) < 25, "the recording is not the monitor's 440 Hz tone: \(audio)")
        let video = probe["video"] as? [String: Any] ?? [:]
        #expect((video["frames"] as? Int ?? 0) >= 20, "\(video)")
        #expect(video["sizes"] as? [String] == ["320x240"], "\(video)")
        print("Matroska \(codec): \(audio["seconds"] ?? 0) s of audio, \(video["frames"] ?? 0) frames")
    }

    @Test("an audio stream recorded to .mkv holds just the Opus audio")
    func matroskaAudioOnly() async throws {
        guard InteropPeers.pythonAvailable(for: "Matroska recording (PyAV)") else { return }
        let directory = try Subprocess.temporaryDirectory("recording-mkv-audio")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("nursery.mkv")
        let monitor = try VideoStreamTests.monitorEngine()
        let listener = try GStreamerMediaEngine(
            configuration: .init(
                dtlsCertificate: try MediaTestSupport.certificate(), iceAddresses: ["127.0.0.1"],
                receiverOutput: .record(try RecordingFiles(path: file))
            )
        )
        let (sender, receiver, senderEvents, receiverEvents) = try await VideoStreamTests.connect(
            monitor, listener, "mkv-audio", mediaType: .audio
        )
        #expect(await receiverEvents.first(where: \.isFlowing) != nil, "no audio: \(receiverEvents.events)")
        try await Task.sleep(for: .milliseconds(2_600))
        await receiver.stop()
        await sender.stop()
        #expect(await senderEvents.finished())

        let probe = try await Self.probe(file)
        let streams = probe["streams"] as? [[String: String]] ?? []
        #expect(streams.map { $0["codec"] ?? "" } == ["opus"], "\(probe)")
        let audio = probe["audio"] as? [String: Any] ?? [:]
        #expect((audio["seconds"] as? Double ?? 0) >= 2, "\(audio)")
        #expect(abs((audio["frequency"] as? Double ?? 0) - 440) < 25, "\(audio)")
    }

    /// What FFmpeg reads in `file`.
    static func probe(_ file: URL) async throws -> [String: Any] {
        let python = try #require(InteropPeers.python)
        let script = Fixtures.repositoryRoot.appendingPathComponent("Tests/Interop/media/mkv_probe.py").path
        let result = try await Subprocess.run(python, [script, file.path])
        #expect(result.status == 0, "mkv_probe.py: \(result.stderrText)")
        let probe = try #require(jsonObject(result.stdoutText), "mkv_probe.py printed \(result.stdoutText)")
        #expect(probe["error"] == nil, "FFmpeg could not read the recording: \(probe)")
        return probe
    }

    final class Announcements: Sendable {
        private let storage = Mutex<[String]>([])
        func append(_ line: String) { storage.withLock { $0.append(line) } }
        var lines: [String] { storage.withLock { $0 } }
    }
}
