import Foundation
import TestSupport
import Testing

/// `argus-hub --web`: the owner's page in a real browser (Tests/Interop/argus/owner_page.py, headless Chromium),
/// against the running hub's mobile API.
@Suite("argus-hub's owner's page", .serialized, .heavy(cores: 1, "headless Chromium"))
struct OwnerPageTests {
    @Test("a code made on the page pairs a phone once; the phone is listed and revoked there; only with the secret")
    func ownerPage() async throws {
        guard let python = InteropPeers.browserPython() else { return }
        let directory = try Subprocess.temporaryDirectory("argus-owner-page")
        defer { try? FileManager.default.removeItem(at: directory) }
        let argusHub = try Subprocess.builtProduct("argus-hub")
        let badPort = try await Subprocess.run(argusHub, ["--http", "--web", "70000", "--data-dir", directory.path])
        #expect(
            badPort.status == 64 && badPort.stderrText.contains("--web 70000 is not a port"), "\(badPort.stderrText)")

        let hub = try BackgroundProcess(
            argusHub, ["--http", "--port", "0", "--web", "0", "--json", "--no-bonjour", "--data-dir", directory.path])
        defer { Task { await hub.stop() } }
        let ready = try await hub.ready("argus-hub") { $0.contains(#""event":"ready""#) }
        let readyLine = try #require(try JSONSerialization.jsonObject(with: Data(ready.utf8)) as? [String: Any])
        let port = try #require(readyLine["port"] as? Int)
        let fingerprint = try #require(readyLine["certFingerprint"] as? String)
        let pageLine = try #require(await hub.line { $0.contains(#""event":"owner_page""#) }, "\(hub.errorOutput)")
        let url = try #require(
            (try JSONSerialization.jsonObject(with: Data(pageLine.utf8)) as? [String: Any])?["url"] as? String)
        #expect(url.hasPrefix("http://127.0.0.1:") && url.contains("/s/"), "\(url)")

        // Without the secret, nothing: the same server answers 403 to a guessed address.
        let origin = String(url[..<url.range(of: "/s/")!.lowerBound])
        let guessed = try await LoopbackHTTP.request("\(origin)/api/state")
        #expect(guessed.status == 403)

        let artifacts = try Fixtures.testArtifacts("argus-owner-page")
        let script = Fixtures.repositoryRoot.appendingPathComponent("Tests/Interop/argus/owner_page.py").path
        let walk = try await Subprocess.run(
            python,
            [
                script, "--url", url, "--hub", "http://127.0.0.1:\(port)", "--fingerprint", fingerprint,
                "--artifacts", artifacts.path,
            ])
        let result =
            try? JSONSerialization.jsonObject(
                with: Data((walk.stdoutText.split(separator: "\n").last ?? "").utf8)) as? [String: Any]
        #expect(
            walk.status == 0 && result?["ok"] as? Bool == true,
            "\(walk.stdoutText)\n--- walk ---\n\(walk.stderrText.suffix(3000))\n--- screenshots: \(artifacts.path)")
        print("owner's page walk: \(result?["timings_ms"] ?? "?")")
    }
}
