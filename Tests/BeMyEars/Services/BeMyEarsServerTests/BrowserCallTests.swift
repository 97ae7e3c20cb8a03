import Foundation
import TestSupport
import Testing

/// Two headless Chromiums in a real video call through the real server (`browser_call.py`, Selenium 4.51.0):
/// once directly, once relay-only through a coturn the server starts (`--with-turn`). Serialized: each call costs
/// about a core and a half.
@Suite(
    "Browser calls", .serialized,
    .heavy(cores: 1, "two headless Chromiums (measured 0.75; both launch at once), coturn and the server"))
struct BrowserCallTests {
    static let chromium = "/usr/bin/chromium"
    static let chromedriver = "/usr/bin/chromedriver"

    @Test func directCall() async throws {
        try await call(serverArguments: [], relay: false)
    }

    @Test func relayCallThroughCoturn() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/turnserver") else {
            Issue.record("coturn is not installed: apt-get install coturn (the relay test needs /usr/bin/turnserver)")
            return
        }
        try await call(serverArguments: ["--with-turn"], relay: true)
    }

    private func call(serverArguments: [String], relay: Bool) async throws {
        for path in [Self.chromium, Self.chromedriver] where !FileManager.default.isExecutableFile(atPath: path) {
            Issue.record("\(path) is missing: apt-get install chromium chromium-driver (the browser tests need both)")
            return
        }
        let server = try await ServerProcess.start(serverArguments)
        let artifacts = try Subprocess.temporaryDirectory("bemyears-browser")
        let run = try await InteropScript.run(
            "browser_call.py",
            ["--url", server.httpURL, "--timeout", "110", "--artifacts", artifacts.path] + (relay ? ["--relay"] : []),
            timeout: .seconds(130)
        )
        let exit = await server.stop()
        let details =
            "\(run.stdout)\n--- browser_call stderr ---\n\(run.stderr.suffix(3000))\n"
            + "--- artifacts: \(artifacts.path)\n--- server log ---\n\(server.log.suffix(3000))"
        #expect(run.status == 0 && run.result["ok"] as? Bool == true, Comment(rawValue: details))
        if relay {
            #expect(run.result["direct_or_relay"] as? String == "relay", "\(run.stdout)")
        }
        #expect(exit == 0, "the server did not shut down cleanly (status \(String(describing: exit)))")
        if run.status == 0 { try? FileManager.default.removeItem(at: artifacts) }
    }
}
