import Foundation
import TestSupport
import Testing
import ToukanTestSupport

/// The real `toukan-server` process against independent clients: curl (multipart, as the seed's backend contract
/// is usually exercised), tuspy (an independent tus 1.0 client) resuming after a cut PATCH, and two processes
/// sharing one PostgreSQL (memories and job queue).
@Suite("toukan-server process", .serialized, .heavy(cores: 1, "server processes, PocketSphinx, PostgreSQL"))
struct ProcessTests {
    static func curl(_ arguments: [String]) async throws -> (status: Int, body: String) {
        let result = try await Subprocess.run(
            "curl", ["-sS", "--max-time", "60", "-o", "-", "-w", "\n%{http_code}"] + arguments)
        guard result.status == 0 else { throw FixtureFailure("curl failed: \(result.stderrText)") }
        let text = result.stdoutText
        let split = text.lastIndex(of: "\n") ?? text.endIndex
        return (Int(text[text.index(after: split)...]) ?? 0, String(text[..<split]))
    }

    static func memoryId(_ body: String) -> String? {
        (try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])?["memory_id"] as? String
    }

    @Test func curlUploadsAndTheMemoryIsTranscribed() async throws {
        let speech = try await AudioFixtures.speech(AudioFixtures.sentences[0], name: "speech-0")
        let directory = try Subprocess.temporaryDirectory("toukan-curl")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await ToukanServerProcess.start(dataDirectory: directory.path)
        defer { Task { await server.stop() } }
        let key = ["-H", "Idempotency-Key: curl-test-key-000000000001"]
        let first = try await Self.curl(key + ["-F", "file=@\(speech.m4a.path)", "\(server.url)/upload"])
        #expect(first.status == 201, "\(first.body)")
        let body = try JSONSerialization.jsonObject(with: Data(first.body.utf8)) as? [String: Any]
        #expect(body?["status"] as? String == "processing")
        #expect(body?["message"] as? String == "Audio uploaded and processing enqueued")
        let id = try #require(Self.memoryId(first.body))
        let again = try await Self.curl(key + ["-F", "file=@\(speech.m4a.path)", "\(server.url)/upload"])
        #expect(again.status == 201)
        #expect(Self.memoryId(again.body) == id)
        let wav = try await Self.curl(["-F", "file=@\(speech.wav.path)", "\(server.url)/upload"])
        #expect(wav.status == 415)
        #expect(wav.body.contains("WAV"), "\(wav.body)")
        try await eventually("the memory to be transcribed", timeout: .seconds(180)) {
            try await server.memories().first?["status"] as? String == "ready"
        }
        let memories = try await server.memories()
        #expect(memories.count == 1)
        #expect((memories.first?["transcript"] as? String)?.isEmpty == false, "\(memories)")
        let page = try await Self.curl(["\(server.url)/"])
        #expect(page.status == 200 && page.body.contains("Toukan"))
        let health = try await Self.curl(["\(server.url)/health"])
        #expect(health.status == 200)
        #expect(await server.stop() == 0)
    }

    /// 413 for a declared Content-Length above the limit (answered before the body is read) and for a streamed
    /// file that passes it (declared within the 64 KiB framing allowance); nothing stored either way.
    @Test func oversizeUploadsAre413() async throws {
        let big = try await AudioFixtures.tone(seconds: 30, name: "tone-30s")
        let small = try await AudioFixtures.tone(seconds: 4, name: "tone-4s")
        let smallSize = try #require(try FileManager.default.attributesOfItem(atPath: small.path)[.size] as? Int)
        let directory = try Subprocess.temporaryDirectory("toukan-413")
        defer { try? FileManager.default.removeItem(at: directory) }
        let limit = smallSize - 5_000
        let server = try await ToukanServerProcess.start(
            dataDirectory: directory.path, ["--workers", "0", "--max-upload-bytes", String(limit)])
        let declared = try await Self.curl(["-F", "file=@\(big.path)", "\(server.url)/upload"])
        #expect(declared.status == 413, "\(declared.body)")
        #expect(declared.body.contains("declares"), "\(declared.body)")
        let streamed = try await Self.curl(["-F", "file=@\(small.path)", "\(server.url)/upload"])
        #expect(streamed.status == 413, "\(streamed.body)")
        #expect(streamed.body.contains("larger than"), "\(streamed.body)")
        #expect(try await server.memories().isEmpty)
        let incoming = try FileManager.default.contentsOfDirectory(
            atPath: directory.appendingPathComponent("incoming").path)
        #expect(incoming.isEmpty)
        await server.stop()
    }

    /// With the default limit (2 GiB), an upload that declares 3 GB is refused from its headers alone: the
    /// answer comes at once, although not one byte of the body is sent, and nothing is stored. A raw socket
    /// (Python's), since an HTTP client would insist on sending the body it declared.
    @Test func threeGigabytesDeclaredAreRefusedFromTheHeaders() async throws {
        let directory = try Subprocess.temporaryDirectory("toukan-3gb")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await ToukanServerProcess.start(dataDirectory: directory.path, ["--workers", "0"])
        defer { Task { await server.stop() } }
        let script = """
            import socket, sys
            s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=20)
            s.sendall(b"POST /upload HTTP/1.1\\r\\nHost: toukan\\r\\n"
                      b"Content-Type: multipart/form-data; boundary=b0undary\\r\\n"
                      b"Content-Length: 3000000000\\r\\n\\r\\n")
            answer = b""
            while b"\\r\\n\\r\\n" not in answer or not answer.rstrip().endswith(b"}"):
                chunk = s.recv(65536)
                if not chunk:
                    break
                answer += chunk
            print(answer.decode("utf-8", "replace"))
            """
        let result = try await Subprocess.run("python3", ["-c", script, String(server.port)])
        #expect(result.status == 0, "\(result.stderrText)")
        #expect(result.stdoutText.hasPrefix("HTTP/1.1 413"), "\(result.stdoutText)")
        #expect(result.stdoutText.contains("declares"), "\(result.stdoutText)")
        let tus = try await Self.curl([
            "-X", "POST", "-H", "Tus-Resumable: 1.0.0", "-H", "Upload-Length: 3000000000", "\(server.url)/files/",
        ])
        #expect(tus.status == 413, "\(tus.body)")
        #expect(try await server.memories().isEmpty)
        let incoming = try FileManager.default.contentsOfDirectory(
            atPath: directory.appendingPathComponent("incoming").path)
        #expect(incoming.isEmpty)
    }

    @Test func tuspyResumesAfterACutPatch() async throws {
        guard InteropPeers.pythonAvailable(for: "tuspy against toukan-server") else { return }
        let python = try #require(InteropPeers.python, "the venv's Python (make test installs tuspy==1.1.0)")
        let file = try await AudioFixtures.tone(seconds: 30, name: "tone-30s")
        let size = try #require(try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int)
        let directory = try Subprocess.temporaryDirectory("toukan-tus")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await ToukanServerProcess.start(dataDirectory: directory.path, ["--workers", "0"])
        defer { Task { await server.stop() } }
        let chunk = 16 * 1024
        let script = Fixtures.repositoryRoot.appendingPathComponent("Tests/Interop/toukan/tus_resume.py").path
        let result = try await Subprocess.run(python, [script, server.url, file.path, String(chunk), "3"])
        #expect(result.status == 0, "\(result.stderrText)\n\(server.log.suffix(2_000))")
        let line = try #require(result.stdoutText.split(separator: "\n").last.map(String.init))
        let report = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(report["offset_before_cut"] as? Int == 3 * chunk)
        let afterCut = try #require(report["offset_after_cut"] as? Int)
        #expect(afterCut > 3 * chunk && afterCut < 4 * chunk, "the half chunk that arrived is kept: \(report)")
        #expect(report["resumed_at"] as? Int == afterCut)
        let memoryId = try #require(report["memory_id"] as? String)
        let memories = try await server.memories()
        #expect(memories.map { $0["memory_id"] as? String } == [memoryId])
        #expect(memories.first?["size"] as? Int == size)
        let stored = directory.appendingPathComponent("audio/\(memoryId).m4a")
        #expect(try Data(contentsOf: stored) == Data(contentsOf: file), "the resumed upload is byte-identical")
    }

    @Test func twoServersShareOnePostgresAndProcessEachMemoryOnce() async throws {
        let postgres = try await LocalPostgres.shared()
        let database = try await postgres.createDatabase("toukan")
        let directory = try Subprocess.temporaryDirectory("toukan-pg")
        defer { try? FileManager.default.removeItem(at: directory) }
        let arguments = ["--database", database.tcpURL, "--workers", "2", "--no-transcription"]
        let first = try await ToukanServerProcess.start(dataDirectory: directory.path, arguments)
        defer { Task { await first.stop() } }
        let second = try await ToukanServerProcess.start(dataDirectory: directory.path, arguments)
        defer { Task { await second.stop() } }
        let file = try await AudioFixtures.tone(seconds: 1, name: "tone-1s")
        var ids: [String] = []
        for index in 0..<8 {
            let server = index.isMultiple(of: 2) ? first : second
            let response = try await Self.curl(["-F", "file=@\(file.path)", "\(server.url)/upload"])
            #expect(response.status == 201, "\(response.body)")
            ids.append(try #require(Self.memoryId(response.body)))
        }
        try await eventually("8 memories processed", timeout: .seconds(180)) {
            try await first.memories().filter { $0["status"] as? String == "ready" }.count == 8
        }
        let jobs = try await postgres.psql(
            "SELECT count(*), sum(attempts), count(DISTINCT payload) FROM job_queue WHERE state = 'succeeded'",
            database: database.name)
        #expect(
            jobs.split(separator: "|").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) } == ["8", "8", "8"],
            "\(jobs)")
        // The memories live in PostgreSQL too (the data directory holds only files): each processed once.
        let memories = try await postgres.psql(
            "SELECT count(*), sum(processing_runs), count(*) FILTER (WHERE status = 'ready') FROM toukan_memory",
            database: database.name)
        #expect(
            memories.split(separator: "|").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
                == ["8", "8", "8"], "\(memories)")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(!files.contains { $0.hasSuffix(".sqlite") }, "no SQLite store beside PostgreSQL: \(files)")
        let started = (first.log + second.log).split(separator: "\n").filter { $0.contains("event=processing_started") }
        #expect(started.count == 8, "\(started)")
        for id in ids {
            #expect(started.filter { $0.contains(id) }.count == 1, "memory \(id) processed once")
        }
    }
}
