import Foundation
import TestSupport
import Testing

/// The signaling protocol (BEMYEARS-PROTOCOL.md) as an independent client sees it: `ws_scenarios.py` (Python
/// `websockets` 15.0.1) against the real `bemyears-server` executable, one fresh server per scenario.
@Suite(
    "WebSocket protocol against an independent client",
    .heavy("a bemyears-server process and a Python websockets client per scenario")
)
struct WebSocketProtocolTests {
    /// Each scenario's checks are listed in its function in `Tests/Interop/bemyears/ws_scenarios.py`.
    @Test(
        "scenario",
        arguments: [
            // NOT_REGISTERED, INVALID_USERNAME, lowercase, USERNAME_TAKEN, BAD_STATE, UNKNOWN_TYPE, roles
            "registration",
            "presence",  // PRESENCE after REGISTERED, on every change, byte order, removal on disconnect
            // CALL_REQUEST → RINGING → ACCEPT → OFFER/ANSWER/ICE relayed → HANGUP → CALL_ENDED → AVAILABLE
            "call_flow",
            "decline",  // CALL_DECLINE forwarded, no CALL_ENDED, interpreter listed again
            "oversize",  // 65,536 bytes accepted; larger → ERROR + close 1009 (single frame, 1 MiB, fragmented)
            "garbage",  // not JSON / not an object / no string type / binary → ERROR PROTOCOL_ERROR + close 1002
            "rate_limit",  // 50/s, burst 100 (REGISTER included): the rest RATE_LIMITED, socket open
            "race",  // 50 simultaneous CALL_REQUESTs: one CALL_RINGING, 49 BUSY; AVAILABLE again after hang-up
            "heartbeat",  // silent interpreter: close 4001 and gone from PRESENCE ~20 s after its last message
            "slow_reader",  // a client that stops reading is disconnected (its socket took nothing for 5 s)
            "framing",  // RFC 6455: fragments, ping/pong, close 1000; violations → 1002 / 1007 / 1009, then TCP ends
        ]
    )
    func scenario(_ name: String) async throws {
        let server = try await ServerProcess.start()
        let run = try await InteropScript.run(
            "ws_scenarios.py",
            [name, "--url", server.webSocketURL],
            timeout: .seconds(90)
        )
        let exit = await server.stop()
        #expect(
            run.status == 0 && run.result["ok"] as? Bool == true,
            "\(name): \(run.stdout)\n--- peer stderr ---\n\(run.stderr)\n--- server log ---\n\(server.log.suffix(4000))"
        )
        #expect(exit == 0, "bemyears-server did not exit cleanly on SIGTERM (status \(String(describing: exit)))")
    }

    /// A page of another origin cannot drive the server (its upgrade is refused); its own page, an origin
    /// given with `--allowed-origin`, and programs (no Origin) can.
    @Test func origins() async throws {
        let server = try await ServerProcess.start(["--allowed-origin", "https://app.example.org"])
        let run = try await InteropScript.run(
            "ws_scenarios.py",
            ["origin", "--url", server.webSocketURL, "--allowed-origin", "https://app.example.org"],
            timeout: .seconds(60)
        )
        await server.stop()
        #expect(run.status == 0 && run.result["ok"] as? Bool == true, "\(run.stdout)\n\(run.stderr)")
        #expect(
            server.log.contains("event=origin_refused origin=http://evil.example")
                && server.log.contains("--allowed-origin"),
            "a refusal is logged for the operator, with the fix")
    }

    /// `--turn-secret-file`: the secret stays out of the process list (`/proc/PID/cmdline` is world-readable), works
    /// as `--turn-secret` does, and a file others may read is refused with the fix.
    @Test func turnSecretFromFile() async throws {
        let secret = "file-secret-\(UUID().uuidString.prefix(8))"
        let directory = try Subprocess.temporaryDirectory("bemyears-secret")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("turn-secret")
        try Data((secret + "\n").utf8).write(to: file)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file.path)
        let turnURL = "turn:127.0.0.1:3478"
        let arguments = ["--port", "0", "--no-bonjour", "--turn-secret-file", file.path, "--turn-url", turnURL]
        let open = try await Subprocess.run(try Subprocess.builtProduct("bemyears-server"), arguments)
        #expect(open.status != 0 && open.stderrText.contains("chmod 600 \(file.path)"), "\(open.stderrText)")

        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        let server = try await ServerProcess.start(["--turn-secret-file", file.path, "--turn-url", turnURL])
        let commandLine = try Data(
            contentsOf: URL(fileURLWithPath: "/proc/\(server.process.processIdentifier)/cmdline"))
        #expect(!String(decoding: commandLine, as: UTF8.self).contains(secret), "the secret is in the process list")
        let run = try await InteropScript.run(
            "ws_scenarios.py",
            ["turn_credentials", "--url", server.webSocketURL, "--turn-secret", secret, "--turn-url", turnURL],
            timeout: .seconds(60)
        )
        await server.stop()
        #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")
        #expect(!server.log.contains(secret), "the TURN secret appeared in the log")
    }

    /// REGISTERED carries TURN REST credentials: `expiry:session`, base64(HMAC-SHA1(secret, username)), 24 h,
    /// checked with Python's hmac.
    @Test func turnCredentialsInRegistered() async throws {
        let secret = "test-secret-\(UUID().uuidString.prefix(8))"
        let turnURL = "turn:127.0.0.1:3478"
        let server = try await ServerProcess.start(["--turn-secret", secret, "--turn-url", turnURL])
        let run = try await InteropScript.run(
            "ws_scenarios.py",
            ["turn_credentials", "--url", server.webSocketURL, "--turn-secret", secret, "--turn-url", turnURL],
            timeout: .seconds(60)
        )
        await server.stop()
        #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")
        #expect(!server.log.contains(secret), "the TURN secret appeared in the log")
    }
}
