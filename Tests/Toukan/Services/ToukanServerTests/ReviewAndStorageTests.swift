import Foundation
import TestSupport
import Testing
import ToukanTestSupport

/// What a person meets on the server side (issue 31), the real `toukan-server` on its defaults against curl and a
/// real browser: a damaged recording fails with the reason instead of passing as a second of audio, audio is kept
/// owner-only whichever way it came, the list of memories has pages instead of stopping at 500, and the review
/// page's player plays on across the page's refreshes and seeks.
@Suite(
    "toukan-server: damaged files, owner-only audio, pages, the review page's player", .serialized,
    .heavy(cores: 1, "toukan-server processes and a headless Chromium"))
struct ReviewAndStorageTests {
    static func curl(_ arguments: [String]) async throws -> (status: Int, body: String, headers: String) {
        let headers = FileManager.default.temporaryDirectory.appendingPathComponent("curl-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: headers) }
        let result = try await Subprocess.run(
            "curl", ["-sS", "--max-time", "60", "-D", headers.path, "-o", "-", "-w", "\n%{http_code}"] + arguments)
        guard result.status == 0 else { throw FixtureFailure("curl failed: \(result.stderrText)") }
        let text = result.stdoutText
        let split = text.lastIndex(of: "\n") ?? text.endIndex
        let head = (try? String(contentsOf: headers, encoding: .utf8)) ?? ""
        return (Int(text[text.index(after: split)...]) ?? 0, String(text[..<split]), head)
    }

    static func upload(_ file: URL, to server: ToukanServerProcess) async throws -> String {
        let answer = try await curl(["-F", "file=@\(file.path)", "\(server.url)/upload"])
        guard answer.status == 201,
            let id = (try? JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])?[
                "memory_id"] as? String
        else { throw FixtureFailure("upload of \(file.lastPathComponent): \(answer.status) \(answer.body)") }
        return id
    }

    static func memory(_ id: String, on server: ToukanServerProcess) async throws -> [String: Any] {
        try await server.memories().first { $0["memory_id"] as? String == id } ?? [:]
    }

    static func mode(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    @Test("good audio followed by random bytes fails with where it stops being MP4 (it passed as half a second)")
    func damagedRecordingsFail() async throws {
        let directory = try Subprocess.temporaryDirectory("toukan-damaged")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await ToukanServerProcess.start(dataDirectory: directory.path, ["--no-transcription"])
        defer { Task { await server.stop() } }
        var generator = SystemRandomNumberGenerator()
        let garbage = (0..<200_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        var damaged: [String: Int] = [:]
        for fragmented in [false, true] {
            let good = try await AudioFixtures.tone(seconds: 4, fragmented: fragmented, name: "tone-4s-\(fragmented)")
            let bytes = try Data(contentsOf: good)
            let bad = directory.appendingPathComponent("damaged-\(fragmented).m4a")
            try (bytes + Data(garbage)).write(to: bad)
            damaged[try await Self.upload(bad, to: server)] = bytes.count
        }
        let clean = try await Self.upload(try await AudioFixtures.tone(seconds: 4, name: "tone-4s-false"), to: server)
        try await eventually("the three processed", timeout: .seconds(60)) {
            try await server.memories().allSatisfy { $0["status"] as? String != "processing" }
        }
        for (id, validBytes) in damaged {
            let memory = try await Self.memory(id, on: server)
            let error = memory["error"] as? String ?? ""
            #expect(memory["status"] as? String == "failed", "\(memory)")
            #expect(
                error.hasPrefix("the file is damaged: it is MP4 up to byte \(validBytes) of \(validBytes + 200_000)"),
                "\(error)")
        }
        let good = try await Self.memory(clean, on: server)
        #expect(good["status"] as? String == "ready" && (good["duration"] as? Double ?? 0) > 3.5, "\(good)")
    }

    @Test("audio is owner-only whichever way it came: POST /upload, and tus from its first byte")
    func audioIsOwnerOnly() async throws {
        let directory = try Subprocess.temporaryDirectory("toukan-modes")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await ToukanServerProcess.start(dataDirectory: directory.path, ["--workers", "0"])
        defer { Task { await server.stop() } }
        let file = try await AudioFixtures.tone(seconds: 4, name: "tone-4s-false")
        let bytes = try Data(contentsOf: file)
        let posted = try await Self.upload(file, to: server)
        #expect(try Self.mode(directory.appendingPathComponent("audio/\(posted).m4a").path) == 0o600)

        let tus = ["-H", "Tus-Resumable: 1.0.0"]
        let created = try await Self.curl(
            tus + [
                "-X", "POST", "-H", "Upload-Length: \(bytes.count)", "-H",
                "Upload-Metadata: filename \(Data("tus.m4a".utf8).base64EncodedString())", "\(server.url)/files/",
            ])
        #expect(created.status == 201, "\(created.body)")
        let location = try #require(
            created.headers.split(separator: "\r\n").first { $0.lowercased().hasPrefix("location:") }.map {
                String($0.dropFirst("location:".count)).trimmingCharacters(in: .whitespaces)
            })
        let upload = try #require(location.split(separator: "/").last.map(String.init))
        #expect(
            try Self.mode(directory.appendingPathComponent("tus/\(upload)").path) == 0o600,
            "a tus upload in progress is someone's conversation too")
        let whole = directory.appendingPathComponent("whole.m4a")
        try bytes.write(to: whole)
        let patched = try await Self.curl(
            tus + [
                "-X", "PATCH", "-H", "Upload-Offset: 0", "-H", "Content-Type: application/offset+octet-stream",
                "--data-binary", "@\(whole.path)", location.hasPrefix("http") ? location : server.url + location,
            ])
        #expect(patched.status == 204, "\(patched.body)")
        let memory = try #require(
            patched.headers.split(separator: "\r\n").first { $0.lowercased().hasPrefix("memory-id:") }.map {
                String($0.dropFirst("memory-id:".count)).trimmingCharacters(in: .whitespaces)
            })
        #expect(try Self.mode(directory.appendingPathComponent("audio/\(memory).m4a").path) == 0o600)
    }

    @Test("GET /memories has pages: a Link to the next, every memory once, and a bad cursor or limit is refused")
    func memoriesInPages() async throws {
        let directory = try Subprocess.temporaryDirectory("toukan-pages")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await ToukanServerProcess.start(dataDirectory: directory.path, ["--workers", "0"])
        defer { Task { await server.stop() } }
        let file = try await AudioFixtures.tone(seconds: 4, name: "tone-4s-false")
        var uploaded: [String] = []
        for _ in 0..<5 { uploaded.append(try await Self.upload(file, to: server)) }
        var seen: [String] = []
        var next: String? = "/memories?limit=2"
        var pages = 0
        while let page = next {
            let answer = try await Self.curl([server.url + page])
            #expect(answer.status == 200, "\(answer.body)")
            let memories = try #require(
                try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [[String: Any]])
            seen += memories.compactMap { $0["memory_id"] as? String }
            let link = answer.headers.split(separator: "\r\n").first { $0.lowercased().hasPrefix("link:") }
            next = link.flatMap { line in
                line.range(of: "<").flatMap { start in
                    line.range(of: ">", range: start.upperBound..<line.endIndex).map {
                        String(line[start.upperBound..<$0.lowerBound])
                    }
                }
            }
            pages += 1
            #expect(pages <= 4, "the pages never end")
            if pages > 4 { break }
        }
        #expect(pages == 3 && seen.count == 5 && Set(seen) == Set(uploaded), "\(pages) pages: \(seen)")
        #expect(try await server.memories().map { $0["memory_id"] as? String } == seen, "one order, newest first")
        let badCursor = try await Self.curl(["\(server.url)/memories?after=\(UUID().uuidString)"])
        #expect(badCursor.status == 400 && badCursor.body.contains("Link header"), "\(badCursor.body)")
        let badLimit = try await Self.curl(["\(server.url)/memories?limit=0"])
        #expect(badLimit.status == 400 && badLimit.body.contains("1 to 500"), "\(badLimit.body)")
    }

    @Test(
        "the review page: a 40 s memory plays 21 s across the page's refreshes without a reset, then seeks (Chromium)")
    func reviewPagePlays() async throws {
        guard let python = InteropPeers.browserPython() else { return }
        let directory = try Subprocess.temporaryDirectory("toukan-review")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await ToukanServerProcess.start(dataDirectory: directory.path, ["--no-transcription"])
        defer { Task { await server.stop() } }
        let id = try await Self.upload(
            try await AudioFixtures.tone(seconds: 40, volume: 0.3, frequency: 440, name: "tone-40s"), to: server)
        try await eventually("the memory processed", timeout: .seconds(60)) {
            try await Self.memory(id, on: server)["status"] as? String == "ready"
        }
        let artifacts = try Fixtures.testArtifacts("toukan-review-page")
        let script = Fixtures.repositoryRoot.appendingPathComponent("Tests/Interop/toukan/review_page.py").path
        let walk = try await Subprocess.run(
            python, [script, "--url", server.url + "/", "--memory", id, "--artifacts", artifacts.path])
        let result =
            try? JSONSerialization.jsonObject(
                with: Data((walk.stdoutText.split(separator: "\n").last ?? "").utf8)) as? [String: Any]
        #expect(
            walk.status == 0 && result?["ok"] as? Bool == true,
            "\(walk.stdoutText)\n--- walk ---\n\(walk.stderrText.suffix(3000))\n--- screenshots: \(artifacts.path)")
        print("review page: listened \(result?["listened"] ?? "?"), seeked to \(result?["seeked_to"] ?? "?")")
    }
}
