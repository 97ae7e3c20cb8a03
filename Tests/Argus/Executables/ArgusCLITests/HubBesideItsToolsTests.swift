import Foundation
import TestSupport
import Testing

/// The hub as its owner runs it, on its defaults (HTTPS on every interface, the owner's page on), with the owner's
/// other tools beside it on the same data directory: the database must come out whole, nothing lost.
///
/// Issue 31: with `--web`, the owner's page opened the database a second time and fixed its mode through a raw
/// descriptor; closing it dropped the hub's SQLite locks, and the next `argus-hub pair` deleted the hub's live
/// write-ahead log ("database disk image is malformed").
@Suite("argus-hub beside its own tools", .serialized)
struct HubBesideItsToolsTests {
    static func json(_ line: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]) ?? [:]
    }

    /// `curl -sk` (TLS without a CA: the hub's certificate is its own) with the status on the last line.
    static func curl(_ arguments: [String]) async throws -> (status: Int, body: String) {
        let result = try await Subprocess.run("curl", ["-sk", "-w", "\n%{http_code}"] + arguments)
        let lines = result.stdoutText.split(separator: "\n", omittingEmptySubsequences: false)
        return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
    }

    @Test(
        "with its owner's page on, the hub beside argus-hub pair ×3, devices list and revoke, and argus pair: every answer right, integrity_check ok"
    )
    func besideItsTools() async throws {
        let directory = try Subprocess.temporaryDirectory("argus-beside")
        let clients = try Subprocess.temporaryDirectory("argus-beside-clients")
        defer {
            try? FileManager.default.removeItem(at: directory)
            try? FileManager.default.removeItem(at: clients)
        }
        let argusHub = try Subprocess.builtProduct("argus-hub")
        let argus = try Subprocess.builtProduct("argus")
        func owner(_ arguments: String...) async throws -> Subprocess.Result {
            try await Subprocess.run(argusHub, arguments + ["--data-dir", directory.path])
        }
        let database = directory.appendingPathComponent("argus.sqlite").path
        let hub = try BackgroundProcess(
            argusHub,
            [
                "--port", "0", "--web", "0", "--json", "--no-bonjour", "--camera", "A=test", "--camera", "B=test",
                "--data-dir", directory.path,
            ])
        defer { Task { await hub.stop(grace: .seconds(10)) } }
        let ready = Self.json(try await hub.ready("argus-hub") { $0.contains(#""event":"ready""#) })
        let port = try #require(ready["port"] as? Int)
        let fingerprint = try #require(ready["certFingerprint"] as? String)
        let hubs = ready["hubs"] as? [String] ?? []
        #expect(
            !hubs.isEmpty && hubs.allSatisfy { $0.hasPrefix("https://") && !$0.contains("0.0.0.0") },
            "the banner names addresses a phone can use: \(hubs)")
        let pageLine = try #require(await hub.line { $0.contains(#""event":"owner_page""#) }, "\(hub.errorOutput)")
        let page = try #require(Self.json(pageLine)["url"] as? String)
        let address = "https://127.0.0.1:\(port)"

        // The owner's page is used, and the owner's commands run beside it.
        #expect(try await LoopbackHTTP.get(page + "api/state").status == 200)
        var codes: [String] = []
        for _ in 0..<3 {
            let made = try await owner("pair", "--json")
            #expect(made.status == 0, "argus-hub pair: \(made.stderrText)")
            codes.append(try #require(Self.json(made.stdoutText)["pairing_code"] as? String, "\(made.stdoutText)"))
        }
        #expect(FileManager.default.fileExists(atPath: database + "-wal"), "the running hub's log was deleted")
        let fromPage = try await LoopbackHTTP.post(page + "api/pairing-code", "{}")
        #expect(fromPage.status == 200, "\(fromPage.text)")
        codes.append(try #require(Self.json(fromPage.text)["pairing_code"] as? String))

        // Two phones pair with the client (pinned TLS), two more through the API as any app would.
        for (index, name) in ["ana", "ben"].enumerated() {
            let paired = try await Subprocess.run(
                argus,
                [
                    "pair", "--hub", address, "--fingerprint", fingerprint, "--code", codes[index], "--name",
                    "\(name)'s phone", "--config-dir", clients.appendingPathComponent(name).path,
                ])
            #expect(paired.status == 0 && paired.stdoutText.contains("Paired with"), "\(paired.stderrText)")
        }
        var accessTokens: [String: String] = [:]
        for (code, device) in [(codes[2], "phone-c"), (codes[3], "phone-d")] {
            let verified = try await Self.curl([
                "-X", "POST", "\(address)/api/v1/mobile/auth/verify", "-H", "Content-Type: application/json", "-d",
                #"{"pairing_code":"\#(code)","device_name":"Phone","device_id":"\#(device)"}"#,
            ])
            #expect(verified.status == 200, "\(device): \(verified.body)")
            accessTokens[device] = Self.json(verified.body)["access_token"] as? String
        }

        let listed = try await owner("devices", "list", "--json")
        let devices = listed.stdoutText.split(separator: "\n").map { Self.json(String($0)) }
        #expect(devices.count == 4 && devices.allSatisfy { $0["active"] as? Bool == true }, "\(listed.stdoutText)")
        let revoked = try await owner("devices", "revoke", "phone-c")
        #expect(revoked.status == 0 && revoked.stdoutText.contains("Revoked phone-c"), "\(revoked.stderrText)")
        let afterRevoke = try await Self.curl([
            "\(address)/api/v1/mobile/cameras", "-H", "Authorization: Bearer \(accessTokens["phone-c"] ?? "")",
        ])
        #expect(afterRevoke.status == 401, "a revoked phone still gets in: \(afterRevoke.body)")
        let stillIn = try await Self.curl([
            "\(address)/api/v1/mobile/cameras", "-H", "Authorization: Bearer \(accessTokens["phone-d"] ?? "")",
        ])
        #expect(stillIn.status == 200, "\(stillIn.body)")

        // The page sees the same database: four devices, one revoked.
        let state = Self.json(try await LoopbackHTTP.get(page + "api/state").text)
        let shown = state["devices"] as? [[String: Any]] ?? []
        #expect(shown.count == 4 && shown.filter { $0["active"] as? Bool == false }.count == 1, "\(state)")

        // Two cameras of one source are two cameras, listed by name, each with its own events.
        let ana = ["--config-dir", clients.appendingPathComponent("ana").path]
        let cameras = try await Subprocess.run(argus, ["cameras", "--json"] + ana)
        let names = cameras.stdoutText.split(separator: "\n").map { Self.json(String($0))["name"] as? String }
        #expect(names == ["A", "B"], "\(cameras.stdoutText)\(cameras.stderrText)")
        let events: [[String: Any]] = try await awaitValue("a motion event of each camera", timeout: .seconds(30)) {
            let listed = try await Subprocess.run(argus, ["events", "--json"] + ana)
            let events = listed.stdoutText.split(separator: "\n").map { Self.json(String($0)) }
            return Set(events.compactMap { $0["camera_name"] as? String }) == ["A", "B"] ? events : nil
        }
        let cameraOf = Dictionary(
            events.map { ($0["camera_name"] as? String ?? "", [$0["camera_id"] as? String ?? ""]) }, uniquingKeysWith: +
        )
        #expect(Set(cameraOf["A"] ?? []).isDisjoint(with: Set(cameraOf["B"] ?? [])), "events credited to one camera")

        let whileRunning = try await Subprocess.run("sqlite3", [database, "PRAGMA integrity_check"])
        #expect(whileRunning.stdoutText == "ok\n", "\(whileRunning.stdoutText)")
        #expect(await hub.stop(grace: .seconds(10)) == 0, "\(hub.errorOutput.suffix(2000))")
        #expect(
            !hub.errorOutput.contains("malformed") && !hub.errorOutput.contains("SQLite error"), "\(hub.errorOutput)")

        // Nothing lost: every device and event is in the file the hub left.
        let check = try await Subprocess.run(
            "sqlite3",
            [
                database,
                """
                PRAGMA integrity_check; SELECT count(*) FROM device; SELECT count(*) FROM device WHERE isActive = 0;
                SELECT count(*) >= \(events.count) FROM event; SELECT count(DISTINCT cameraId) FROM event;
                """,
            ])
        #expect(
            check.stdoutText == "ok\n4\n1\n1\n2\n", "integrity, devices, revoked, events, cameras: \(check.stdoutText)")
    }
}
