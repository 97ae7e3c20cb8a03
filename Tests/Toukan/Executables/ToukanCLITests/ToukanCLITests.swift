import Foundation
import TestSupport
import Testing
import ToukanCore
import ToukanTestSupport

/// The `toukan` program as a person uses it: the daemon started on first use, the seed's replies, the status, and
/// a recording that survives `kill -9` of the daemon.
@Suite("toukan start, stop and status")
struct ToukanCLITests {
    /// A data directory short enough for the control socket's path; removed at the end of the test.
    final class DataDirectory: Sendable {
        let path = "/tmp/tk-\(UUID().uuidString.prefix(8))"

        var recordings: URL { URL(fileURLWithPath: path).appendingPathComponent("recordings") }

        func files() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: recordings.path).sorted()
        }

        func toukan(_ arguments: String...) async throws -> Subprocess.Result {
            try await Subprocess.run(try Subprocess.builtProduct("toukan"), arguments + ["--data-dir", path])
        }

        /// `toukan status --json`, parsed.
        func status() async throws -> [String: Any] {
            let result = try await toukan("status", "--json")
            return try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any] ?? [:]
        }

        deinit {
            // The daemon outlives each command: stop it with the test (SIGKILL: a test process's children may
            // inherit a mask that blocks SIGTERM).
            if let text = try? String(contentsOfFile: path + "/daemon.log", encoding: .utf8) {
                for line in text.split(separator: "\n") where line.contains("ready, pid ") {
                    if let pid = Int32(line.split(separator: " ").last ?? "") { kill(pid, SIGKILL) }
                }
            }
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    @Test("the seed's replies, a status with pid, timer and file, and a saved owner-only .m4a")
    func startStopStatus() async throws {
        let data = DataDirectory()
        #expect(try await data.toukan("status").stdoutText == "Toukan isn't recording right now\n")
        #expect(try await data.toukan("stop").stdoutText == "Toukan isn't recording right now\n")
        let started = try await data.toukan("start", "--audio-source", "test:tone")
        #expect(started.stdoutText == "Recording started\n", "\(started.stderrText)")
        #expect(try await data.toukan("start").stdoutText == "Toukan is already recording\n")
        try await eventually("the timer runs") { (try await data.status()["elapsedSeconds"] as? Double ?? 0) >= 1 }
        let status = try await data.status()
        #expect(status["state"] as? String == "recording")
        #expect((status["pid"] as? Int ?? 0) > 0)
        let file = try #require(status["file"] as? String)
        #expect(URL(fileURLWithPath: file).lastPathComponent.hasPrefix("toukan_"))
        #expect(try await data.toukan("status").stdoutText.hasPrefix("● REC 00:0"))
        let stopped = try await data.toukan("stop")
        #expect(
            stopped.stdoutText == """
                Recording saved. I'll upload it in the background.
                It waits here: no upload server is set (`toukan start --server URL` sets one).

                """)
        let history = try await data.toukan("history").stdoutText
        #expect(
            history.contains("waiting to upload: no upload server is set (`toukan start --server URL`"), "\(history)")
        #expect(try data.files() == [URL(fileURLWithPath: file).lastPathComponent])
        let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600)
        #expect(try await data.status()["state"] as? String == "idle")
    }

    @Test(
        "kill -9 of the daemon mid-recording: the next status recovers at once all that reached the disk; history lists it"
    )
    func killedDaemon() async throws {
        let data = DataDirectory()
        #expect(try await data.toukan("start", "--audio-source", "test:tone").status == 0)
        try await eventually("three seconds are recorded") {
            (try await data.status()["elapsedSeconds"] as? Double ?? 0) >= 3
        }
        let status = try await data.status()
        let recorded = try #require(status["elapsedSeconds"] as? Double)
        let pid = try #require(status["pid"] as? Int)
        kill(pid_t(pid), SIGKILL)
        try await eventually("the daemon is gone") { kill(pid_t(pid), 0) != 0 }
        let partial = try data.files()
        #expect(partial.count == 1 && partial[0].hasSuffix(".m4a.part"), "\(partial)")
        let recovered = String(partial[0].dropLast(".part".count))
        // What had reached the disk when the daemon died, cut after its last complete box (a fragment being
        // written is dropped by the recovery): FFmpeg reads it below beside the recovered file. Audio still in the
        // encoder's queue is lost with the process (about a fragment on an idle machine, more when starved).
        let onDisk = URL(fileURLWithPath: data.path + "-on-disk.m4a")
        defer { try? FileManager.default.removeItem(at: onDisk) }
        try Self.completeBoxes(Data(contentsOf: data.recordings.appendingPathComponent(partial[0]))).write(to: onDisk)
        // Whatever the person types next mends it first: `status` starts a daemon, which finalizes the file.
        let next = try await data.toukan("status")
        #expect(
            next.stdoutText.hasPrefix("Toukan isn't recording right now\nRecovered \(recovered) (")
                && next.stdoutText.contains("after the recorder stopped unexpectedly."),
            "\(next.stdoutText)\(next.stderrText)")
        let history = try await data.toukan("history").stdoutText
        #expect(history.contains("waiting to upload") && history.contains("(recovered after a crash)"), "\(history)")
        #expect(try await data.toukan("start", "--audio-source", "test:tone").stdoutText == "Recording started\n")
        #expect(try await data.toukan("stop").status == 0)
        let files = try data.files()
        #expect(files.count == 2 && files.contains(recovered) && !files.contains { $0.hasSuffix(".part") }, "\(files)")
        let log = try String(contentsOfFile: data.path + "/daemon.log", encoding: .utf8)
        #expect(log.contains("recovered \(recovered)"))
        guard InteropPeers.pythonAvailable(for: "FFmpeg's check of the recovered recording") else { return }
        let probe = try await RecordingProbe.read(data.recordings.appendingPathComponent(recovered))
        #expect(probe.codecs == ["aac"] && probe.sampleRate == 44_100 && probe.channels == 1)
        let reachedDisk = try await RecordingProbe.read(onDisk)
        // All the complete fragments, and of a fragment the kill cut while it was being written, the samples whose
        // bytes had reached the disk (qtdemux reads them from a cut box; seen: 10.43 s recovered from 10.24 s of
        // complete boxes): at most one fragment (500 ms) more.
        #expect(
            reachedDisk.seconds >= 0.5 && probe.seconds >= reachedDisk.seconds - 0.05
                && probe.seconds <= reachedDisk.seconds + 0.55,
            "recovered \(probe.seconds) s; \(reachedDisk.seconds) s had reached the disk (\(recorded) s recorded when asked)"
        )
    }

    /// The bytes of a recording cut anywhere, up to the end of its last complete box.
    static func completeBoxes(_ bytes: Data) -> Data {
        let array = [UInt8](bytes)
        let read: (Int64) -> [UInt8] = { Array(array[Int($0)..<min(array.count, Int($0) + 16)]) }
        guard case .damaged(let valid, _) = MP4Boxes.walk(size: Int64(array.count), header: read) else { return bytes }
        return bytes.prefix(Int(valid))
    }

    @Test(
        "the server down: status and history say it is unreachable since when and the next try; retry --all hurries it once up"
    )
    func uploadsWhenTheServerComesUp() async throws {
        let data = DataDirectory()
        let port = try await FreePort.take()
        // Nothing listens yet: the recording waits in the ledger.
        #expect(
            try await data.toukan("start", "--audio-source", "test:speech", "--server", "http://127.0.0.1:\(port)")
                .status == 0)
        try await Task.sleep(for: .seconds(1))
        #expect(try await data.toukan("stop").status == 0)
        try await eventually("two attempts find the server unreachable") {
            let history = try await data.toukan("history", "--json").stdoutText
            return history.contains(#""offlineAttempts":2"#) || history.contains(#""uploadStatus":"failed""#)
        }
        let status = try await data.toukan("status").stdoutText
        #expect(
            status.contains("Uploads: 1 waiting: 127.0.0.1:\(port) unreachable since ")
                // The third try is due 2 s after the second: a slow `status` finds it due.
                && (status.contains(", next try ") || status.contains(", trying again now")),
            "\(status)")
        let history = try await data.toukan("history").stdoutText
        #expect(history.contains("waiting: 127.0.0.1:\(port) unreachable since "), "\(history)")
        let json = try await data.toukan("history", "--json").stdoutText
        #expect(
            json.contains(#""lastError":"network: cannot reach 127.0.0.1:\#(port) (connection refused)""#),
            "said in words, not as nested error types: \(json)")
        // An independent server (Python's http.server) comes up; `retry --all` is the pull-to-refresh.
        let script = Fixtures.repositoryRoot.appendingPathComponent("Tests/Interop/toukan/upload_server.py").path
        let server = try BackgroundProcess("python3", [script, "127.0.0.1", "\(port)"])
        try await server.ready("upload_server.py") { $0.contains(#""ready""#) }
        #expect(try await data.toukan("retry", "--all").status == 0)
        try await eventually("uploaded", timeout: .seconds(60)) {
            try await data.toukan("history", "--json").stdoutText.contains(#""uploadStatus":"uploaded""#)
        }
        let uploaded = try await data.toukan("history").stdoutText
        #expect(uploaded.contains("uploaded"), "\(uploaded)")
        #expect(await server.line(timeout: .seconds(5)) { $0.contains(#""stored""#) } != nil)
        _ = await server.stop()
    }

    @Test("the whole path: recorded, uploaded to toukan-server, processed; the history holds the server's memory id")
    func toToukanServer() async throws {
        let data = DataDirectory()
        let serverData = data.path + "-server"
        defer { try? FileManager.default.removeItem(atPath: serverData) }
        let server = try BackgroundProcess(
            try Subprocess.builtProduct("toukan-server"),
            ["--port", "0", "--data-dir", serverData, "--json", "--no-transcription"])
        let ready = try await server.ready("toukan-server") { $0.contains(#""ready""#) }
        let port = try #require(
            (try JSONSerialization.jsonObject(with: Data(ready.utf8)) as? [String: Any])?["port"] as? Int)
        #expect(
            try await data.toukan("start", "--audio-source", "test:tone", "--server", "http://127.0.0.1:\(port)").status
                == 0)
        try await eventually("two seconds are recorded") {
            (try await data.status()["elapsedSeconds"] as? Double ?? 0) >= 2
        }
        #expect(try await data.toukan("stop").status == 0)
        var memoryId = ""
        try await eventually("uploaded", timeout: .seconds(60)) {
            let line = try await data.toukan("history", "--json").stdoutText
            let entry = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            memoryId = entry?["memoryId"] as? String ?? ""
            return entry?["uploadStatus"] as? String == "uploaded"
        }
        var memory: [String: Any] = [:]
        try await eventually("processed", timeout: .seconds(60)) {
            let body = try await Subprocess.run("curl", ["-fsS", "http://127.0.0.1:\(port)/memories"]).stdout
            let memories = try JSONSerialization.jsonObject(with: Data(body)) as? [[String: Any]] ?? []
            memory = memories.first { $0["memory_id"] as? String == memoryId } ?? [:]
            return memory["status"] as? String == "ready"
        }
        let duration = try #require(memory["duration"] as? Double)
        #expect(duration >= 1.5 && duration <= 60, "\(memory)")
        #expect((memory["file_name"] as? String)?.hasPrefix("toukan_") == true, "\(memory)")
        _ = await server.stop()
    }

    @Test("install-service writes a user unit running the daemon for this data directory, which systemd accepts")
    func installService() async throws {
        let data = DataDirectory()
        let sandbox = try SystemdSandbox()
        defer { sandbox.remove() }
        let units = sandbox.root.appendingPathComponent("units").path
        let installed = try await data.toukan("install-service", "--unit-dir", units, "--executable", sandbox.program)
        #expect(installed.status == 0, "\(installed.stderrText)")
        #expect(installed.stdoutText.hasPrefix("Wrote \(units)/toukan.service\nNext:\n"), "\(installed.stdoutText)")
        let text = try String(contentsOfFile: units + "/toukan.service", encoding: .utf8)
        #expect(text.contains(" daemon --data-dir \(data.path)"), "\(text)")
        #expect(
            try await data.toukan("install-service", "--unit-dir", units, "--executable", sandbox.program)
                .stdoutText.hasPrefix("Already up to date:"))
        if let analyze = try? Subprocess.resolve("systemd-analyze") {
            try await sandbox.expectAccepted(text, named: "toukan.service", by: analyze)
        }
    }

    @Test("on a disk with under 100 MB free, start is refused with how much is free and what to do")
    func lowDiskSpace() async throws {
        let data = DataDirectory()
        try FileManager.default.createDirectory(atPath: data.path, withIntermediateDirectories: true)
        // A 20 MB tmpfs as the data directory. Needs root (make test runs as root).
        let mounted = try await Subprocess.run(
            "mount", ["-t", "tmpfs", "-o", "size=20m,mode=0700", "tmpfs", data.path])
        guard mounted.status == 0 else {
            if getuid() == 0 { Issue.record("cannot mount a tmpfs as root: \(mounted.stderrText)") }
            FileHandle.standardError.write(
                Data("WARNING: SKIPPING the low-disk test: cannot mount a tmpfs (\(mounted.stderrText))\n".utf8))
            return
        }
        let refused = try await data.toukan("start", "--audio-source", "test:tone")
        let status = try await data.status()
        if let pid = status["pid"] as? Int { kill(pid_t(pid), SIGKILL) }
        try await eventually("the daemon is gone") { (status["pid"] as? Int).map { kill(pid_t($0), 0) != 0 } ?? true }
        let unmounted = try await Subprocess.run("umount", [data.path])
        #expect(unmounted.status == 0, "\(unmounted.stderrText)")
        #expect(refused.status == 1, "\(refused.stdoutText)")
        #expect(
            refused.stderrText.hasPrefix("toukan start: Not enough free space to record: "), "\(refused.stderrText)")
        #expect(refused.stderrText.contains("Toukan needs at least 100 MB. Free some space and try again."))
        #expect(status["state"] as? String == "idle", "nothing is recording: \(status)")
    }

    @Test("a bad audio source is refused with what to use, and nothing is left recording")
    func badSource() async throws {
        let data = DataDirectory()
        let refused = try await data.toukan("start", "--audio-source", "telepathy")
        #expect(refused.status == 1)
        #expect(refused.stderrText.hasPrefix("toukan start: "), "\(refused.stderrText)")
        #expect(try await data.status()["state"] as? String == "idle")
    }
}
