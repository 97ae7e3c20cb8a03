import Foundation
import TestSupport
import Testing

/// `argus-hub` as its owner runs it: serve, make codes, list and revoke devices; and the running hub held to
/// docs/api/mobile-api.yaml by schemathesis, an implementation nobody here wrote.
@Suite("argus-hub on the command line, and its API against the spec", .serialized)
struct ArgusHubCLITests {
    static func argusHub(_ arguments: [String]) async throws -> Subprocess.Result {
        try await Subprocess.run(try Subprocess.builtProduct("argus-hub"), arguments)
    }

    /// A hub on a free loopback port; its port and data directory.
    static func start(_ directory: URL, _ more: [String] = []) async throws -> (process: BackgroundProcess, url: String)
    {
        let process = try BackgroundProcess(
            try Subprocess.builtProduct("argus-hub"),
            ["--http", "--port", "0", "--json", "--no-bonjour", "--data-dir", directory.path] + more)
        let ready = try await process.ready("argus-hub") { $0.contains(#""event":"ready""#) }
        let json = try #require(try JSONSerialization.jsonObject(with: Data(ready.utf8)) as? [String: Any])
        let port = try #require(json["port"] as? Int)
        return (process, "http://127.0.0.1:\(port)")
    }

    @Test("pair prints a code the API takes; devices list and revoke; a hub off loopback is refused with why")
    func ownerCommands() async throws {
        let directory = try Subprocess.temporaryDirectory("argus-cli")
        defer { try? FileManager.default.removeItem(at: directory) }
        let before = try await Self.argusHub(["pair", "--data-dir", directory.appendingPathComponent("none").path])
        #expect(before.status != 0 && before.stderrText.contains("start `argus-hub --data-dir"))
        let (hub, url) = try await Self.start(directory)
        let paired = try await Self.argusHub(["pair", "--json", "--data-dir", directory.path])
        let answer = try #require(
            try JSONSerialization.jsonObject(with: Data(paired.stdoutText.utf8)) as? [String: Any])
        let code = try #require(answer["pairing_code"] as? String)
        #expect(code.count == 6 && answer["expires_in_seconds"] as? Int == 300)
        let text = try await Self.argusHub(["pair", "--data-dir", directory.path])
        #expect(text.stdoutText.contains("Pairing code: ") && text.stdoutText.contains("within 5 minutes"))

        let verify = try await LoopbackHTTP.post(
            url + "/api/v1/mobile/auth/verify",
            #"{"pairing_code":"\#(code)","device_name":"Ana\u202e's phone","device_id":"phone-ana"}"#)
        #expect(verify.status == 200, "\(verify.text)")
        let list = try await Self.argusHub(["devices", "list", "--data-dir", directory.path])
        #expect(list.stdoutText.contains("phone-ana") && list.stdoutText.contains("U+202E"), "\(list.stdoutText)")
        #expect(!list.stdoutText.unicodeScalars.contains { $0.value == 0x202E }, "no bidi override reaches a terminal")
        let json = try await Self.argusHub(["devices", "list", "--json", "--data-dir", directory.path])
        let device = try #require(try JSONSerialization.jsonObject(with: Data(json.stdoutText.utf8)) as? [String: Any])
        #expect(device["device_id"] as? String == "phone-ana" && device["active"] as? Bool == true)
        let revoked = try await Self.argusHub(["devices", "revoke", "phone-a", "--data-dir", directory.path])
        #expect(revoked.status == 0 && revoked.stdoutText.contains("Revoked phone-ana"))
        let again = try await Self.argusHub(["devices", "revoke", "phone-ana", "--data-dir", directory.path])
        #expect(again.status != 0 && again.stderrText.contains("devices list"))

        let wide = try await Self.argusHub(["--http", "--host", "0.0.0.0", "--port", "0", "--data-dir", directory.path])
        #expect(wide.status == 64 && wide.stderrText.contains("only on loopback"), "\(wide.stderrText)")
        #expect(await hub.stop() != nil)
        for secret in ["admin-token", "signing-key.pem", "argus.sqlite"] {
            let mode =
                try FileManager.default.attributesOfItem(
                    atPath: directory.appendingPathComponent(secret).path)[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(secret)")
        }
    }

    @Test("HTTPS: TLS 1.3 only, with the certificate whose fingerprint the hub prints (Python's ssl as the app)")
    func tls() async throws {
        guard let python = InteropPeers.python else {
            Issue.record("the Python venv is missing: run `make test`")
            return
        }
        let directory = try Subprocess.temporaryDirectory("argus-tls")
        defer { try? FileManager.default.removeItem(at: directory) }
        let hub = try BackgroundProcess(
            try Subprocess.builtProduct("argus-hub"),
            ["--host", "127.0.0.1", "--port", "0", "--json", "--no-bonjour", "--data-dir", directory.path])
        let ready = try await hub.ready("argus-hub") { $0.contains(#""event":"ready""#) }
        let json = try #require(try JSONSerialization.jsonObject(with: Data(ready.utf8)) as? [String: Any])
        let port = try #require(json["port"] as? Int)
        let fingerprint = try #require(json["certFingerprint"] as? String)
        #expect(json["scheme"] as? String == "https" && fingerprint.count == 64)
        let paired = try await Self.argusHub(["pair", "--json", "--data-dir", directory.path])
        #expect(paired.stdoutText.contains(#""cert_fingerprint":"\#(fingerprint)""#), "\(paired.stdoutText)")

        let probe = try await Subprocess.run(
            python,
            [
                Fixtures.repositoryRoot.appendingPathComponent("Tests/Interop/argus/tls_probe.py").path, "--port",
                String(port), "--fingerprint", fingerprint,
            ])
        #expect(probe.status == 0, "\(probe.stdoutText)\n\(probe.stderrText)")
        print("TLS probe: \(probe.stdoutText)")
        // plain HTTP to the TLS port gets no answer an HTTP client would take
        let plain = try? await LoopbackHTTP.get("http://127.0.0.1:\(port)/health")
        #expect(plain == nil || plain?.status != 200)
        _ = await hub.stop()
    }

    @Test(
        "argus, the client: pairs over TLS by code and pinned fingerprint, lists events, saves a thumbnail; a wrong pin sends nothing"
    )
    func client() async throws {
        let directory = try Subprocess.temporaryDirectory("argus-client-hub")
        let config = try Subprocess.temporaryDirectory("argus-client")
        defer {
            try? FileManager.default.removeItem(at: directory)
            try? FileManager.default.removeItem(at: config)
        }
        let hub = try BackgroundProcess(
            try Subprocess.builtProduct("argus-hub"),
            [
                "--host", "127.0.0.1", "--port", "0", "--json", "--no-bonjour", "--camera", "Garden=test",
                "--motion-cooldown", "1", "--data-dir", directory.path,
            ])
        let ready = try await hub.ready("argus-hub") { $0.contains(#""event":"ready""#) }
        let json = try #require(try JSONSerialization.jsonObject(with: Data(ready.utf8)) as? [String: Any])
        let address = "https://127.0.0.1:\(try #require(json["port"] as? Int))"
        let paired = try await Self.argusHub(["pair", "--json", "--data-dir", directory.path])
        let code = try #require(
            try JSONSerialization.jsonObject(with: Data(paired.stdoutText.utf8)) as? [String: Any])
        let argus = try Subprocess.builtProduct("argus")
        let common = ["--config-dir", config.path]

        let wrongPin = try await Subprocess.run(
            argus,
            ["pair", "--hub", address, "--fingerprint", String(repeating: "ab", count: 32), "--code", "123456"] + common
        )
        #expect(
            wrongPin.status == 1 && wrongPin.stderrText.contains("not the one paired with"), "\(wrongPin.stderrText)")
        #expect(!FileManager.default.fileExists(atPath: config.appendingPathComponent("session.json").path))

        let pair = try await Subprocess.run(
            argus,
            [
                "pair", "--hub", address, "--fingerprint", code["cert_fingerprint"] as? String ?? "", "--code",
                code["pairing_code"] as? String ?? "", "--name", "Test laptop",
            ] + common)
        #expect(pair.status == 0 && pair.stdoutText.contains("Paired with 127.0.0.1"), "\(pair.stderrText)")
        let mode =
            try FileManager.default.attributesOfItem(
                atPath: config.appendingPathComponent("session.json").path)[.posixPermissions] as? Int
        #expect(mode == 0o600)

        let events: [String] = try await awaitValue("events through argus", timeout: .seconds(30)) {
            let listed = try await Subprocess.run(argus, ["events", "--json"] + common)
            let lines = listed.stdoutText.split(separator: "\n").map(String.init)
            return lines.count >= 2 ? lines : nil
        }
        let first = try #require(try JSONSerialization.jsonObject(with: Data(events[0].utf8)) as? [String: Any])
        #expect(first["camera_name"] as? String == "Garden")
        let file = config.appendingPathComponent("thumb.jpg").path
        let thumbnail = try await Subprocess.run(
            argus, ["thumbnail", first["id"] as? String ?? "", "--output", file] + common)
        #expect(thumbnail.status == 0, "\(thumbnail.stderrText)")
        let jpeg = try Data(contentsOf: URL(fileURLWithPath: file))
        #expect(jpeg.count <= 50_000 && jpeg.starts(with: [0xFF, 0xD8]))
        let cameras = try await Subprocess.run(argus, ["cameras"] + common)
        #expect(cameras.stdoutText.contains("Garden (test, online)"), "\(cameras.stdoutText)")

        // the QR code carries address, pin and code: what a phone scans instead of typing
        let port = try #require(json["port"] as? Int)
        let shown = try await Self.argusHub(["pair", "--qr-address", "127.0.0.1:\(port)", "--data-dir", directory.path])
        #expect(shown.status == 0 && shown.stdoutText.contains("Scan it with the app"), "\(shown.stderrText)")
        #expect(shown.stdoutText.contains("█") || shown.stdoutText.contains("▀"), "a QR code in the terminal")
        let qr = try await Self.argusHub([
            "pair", "--json", "--qr-address", "127.0.0.1:\(port)", "--data-dir", directory.path,
        ])
        let qrText = try #require(
            (try JSONSerialization.jsonObject(with: Data(qr.stdoutText.utf8)) as? [String: Any])?["qr"] as? String)
        #expect(qrText.contains(#""hub":"https://127.0.0.1:\#(port)""#), "\(qrText)")
        let second = try Subprocess.temporaryDirectory("argus-client-qr")
        defer { try? FileManager.default.removeItem(at: second) }
        let scanned = try await Subprocess.run(argus, ["pair", "--qr", qrText, "--config-dir", second.path])
        #expect(scanned.status == 0 && scanned.stdoutText.contains("Paired with"), "\(scanned.stderrText)")
        let notOurs = try await Subprocess.run(argus, ["pair", "--qr", #"{"monitor":1}"#, "--config-dir", second.path])
        #expect(notOurs.status == 1 && notOurs.stderrText.contains("--qr is the text"), "\(notOurs.stderrText)")
        _ = await hub.stop()
    }

    @Test("_argus._tcp as python-zeroconf sees it from another host: port, path, TLS and the fingerprint to pin")
    func bonjour() async throws {
        guard MDNSNetwork.available(for: "ArgusHubCLITests.bonjour"),
            InteropPeers.pythonAvailable(for: "ArgusHubCLITests.bonjour")
        else { return }
        let directory = try Subprocess.temporaryDirectory("argus-bonjour")
        defer { try? FileManager.default.removeItem(at: directory) }
        try await MDNSNetwork.with(avahiIn: ["a"]) { network in
            let hub = try network.start(
                network.a, try Subprocess.builtProduct("argus-hub"),
                [
                    "--host", MDNSNetwork.addressA, "--port", "0", "--json", "--name", "Argus at home", "--data-dir",
                    directory.path,
                ])
            let ready = try await hub.ready("argus-hub") { $0.contains(#""event":"ready""#) }
            let json = try #require(try JSONSerialization.jsonObject(with: Data(ready.utf8)) as? [String: Any])
            let browser = try network.zeroconfPeer(
                network.b, ["browse", "--type", "_argus._tcp.local.", "--seconds", "20"])
            try await browser.ready("zeroconf_peer.py browse") { $0.contains(#""event": "ready""#) }
            let added = await browser.line(timeout: .seconds(20)) { $0.contains(#""event": "add""#) }
            let event = try #require(
                added.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] },
                "zeroconf: \(browser.output) \(browser.errorOutput)\nhub: \(hub.errorOutput)")
            #expect(event["port"] as? Int == json["port"] as? Int)
            #expect((event["name"] as? String)?.hasPrefix("Argus at home") == true)
            #expect(
                event["txt"] as? [String: String] == [
                    "v": "1", "path": "/api/v1/mobile", "tls": "1", "fp": json["certFingerprint"] as? String ?? "?",
                ])
            #expect(await hub.stop(grace: .seconds(10)) == 0)
            let removed = await browser.line(timeout: .seconds(10)) { $0.contains(#""event": "remove""#) }
            #expect(removed != nil, "the advertisement was not withdrawn: \(browser.output)")
            await browser.stop()
        }
    }

    @Test("schemathesis: every check and phase, stateful runs over the spec's links, against the running hub")
    func conformance() async throws {
        guard let python = InteropPeers.python else {
            Issue.record("the Python venv is missing: run `make test` (it installs schemathesis into .venv)")
            return
        }
        let schemathesis = URL(fileURLWithPath: python).deletingLastPathComponent().appendingPathComponent(
            "schemathesis"
        ).path
        let directory = try Subprocess.temporaryDirectory("argus-schemathesis")
        defer { try? FileManager.default.removeItem(at: directory) }
        // A camera that makes events on its own, so the event, thumbnail and snapshot calls have something to find.
        let (hub, url) = try await Self.start(directory, ["--camera", "Garden=test", "--motion-cooldown", "1"])
        // A device paired as the spec's examples name it, so their push calls are its own.
        let admin = try String(contentsOf: directory.appendingPathComponent("admin-token"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let made = try await LoopbackHTTP.request(
            url + "/api/v1/mobile/auth/pair", method: "POST", headers: ["X-Argus-Admin": admin])
        let code =
            try #require(try JSONSerialization.jsonObject(with: Data(made.body)) as? [String: Any])[
                "pairing_code"] as? String
        let device = "6F1C2A7E-93B4-4D0A-8C55-1E2F3A4B5C6D"
        let verified = try await LoopbackHTTP.post(
            url + "/api/v1/mobile/auth/verify",
            #"{"pairing_code":"\#(code ?? "")","device_name":"Conformance","device_id":"\#(device)"}"#)
        let token =
            try #require(try JSONSerialization.jsonObject(with: Data(verified.body)) as? [String: Any])[
                "access_token"] as? String
        try await eventually("the first motion event") {
            let events = try await LoopbackHTTP.request(
                url + "/api/v1/mobile/events/recent", headers: ["Authorization": "Bearer \(token ?? "")"])
            return events.text.contains("Motion")
        }
        let root = Fixtures.repositoryRoot
        let run = try await Subprocess.run(
            schemathesis,
            [
                "--config-file", root.appendingPathComponent("Tests/Interop/argus/schemathesis.toml").path, "run",
                root.appendingPathComponent("docs/api/mobile-api.yaml").path, "--url", url, "--checks", "all",
                "--phases", "examples,coverage,fuzzing,stateful", "--max-examples", "40", "--seed", "20261126",
                "-H", "Authorization: Bearer \(token ?? "")", "-H", "X-Argus-Admin: \(admin)", "--no-color",
            ], environment: ["SCHEMATHESIS_HOOKS": "", "HYPOTHESIS_STORAGE_DIRECTORY": directory.path])
        _ = await hub.stop()
        let summary = run.stdoutText.split(separator: "\n").suffix(25).joined(separator: "\n")
        #expect(run.status == 0, "schemathesis found failures:\n\(run.stdoutText.suffix(6000))\n\(run.stderrText)")
        #expect(run.stdoutText.contains("Stateful") && !run.stdoutText.contains("❌"), "\(summary)")
        print("schemathesis against argus-hub:\n\(summary)")
    }
}
