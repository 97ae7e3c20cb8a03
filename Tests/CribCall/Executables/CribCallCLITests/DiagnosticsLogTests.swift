import CanonicalJSON
import Foundation
import TestSupport
import Testing

/// `CRIBCALL_LOG_LEVEL=debug` (issue 33 item 4): the monitor and the listener say on stderr how connections, pairing
/// sessions and streams come and go, each line with where it happened (`connection=`, `listener=`, `monitor=`), in
/// the one style of the program's diagnostics; never a PIN or a key. The default level says none of it.
@Suite("cribcall: the debug log", .serialized, .heavy(cores: 0.5, "a monitor and pairing listeners"))
struct DiagnosticsLogTests {
    static let debug = ["CRIBCALL_LOG_LEVEL": "debug"]

    @Test("debug: a stranger's PIN pairing, by connection, without the PIN; the default level: nothing of it")
    func pairingLog() async throws {
        let monitorData = try Subprocess.temporaryDirectory("cribcall-log-monitor")
        let listenerData = try Subprocess.temporaryDirectory("cribcall-log-listener")
        defer {
            try? FileManager.default.removeItem(at: monitorData)
            try? FileManager.default.removeItem(at: listenerData)
        }
        let cribcall = try Subprocess.builtProduct("cribcall")
        let monitor = try BackgroundProcess(
            cribcall,
            [
                "monitor", "--port", "0", "--json", "--no-discovery", "--audio-source", "test:silence",
                "--data-dir", monitorData.path,
            ], environment: Self.debug)
        defer { Task { await monitor.stop() } }
        let ready = try #require(
            ExitAndPairingWordsTests.object(try await monitor.ready("cribcall monitor") { $0.contains(#""ready""#) }))
        let port = try #require(ready["port"]?.numberValue?.intValue)
        let fingerprint = try #require(ready["certFingerprint"]?.stringValue)
        let pair =
            ["pair", "--pin", "--address", "127.0.0.1:\(port)", "--fingerprint", fingerprint, "--pin-code", "000000"]
            + ["--data-dir", listenerData.path]

        // A stranger pairs by PIN, wrongly.
        let wrong = try await Subprocess.run(cribcall, pair, environment: Self.debug)
        #expect(wrong.status == 1, "\(wrong.stderrText)")
        let pin = try #require(
            ExitAndPairingWordsTests.object(await monitor.line { $0.contains(#""event":"pin""#) })?["pin"]?.stringValue)
        try await eventually("the monitor's debug log of the connection") {
            monitor.errorOutput.contains("disconnected")
        }
        let log = monitor.errorOutput
        let lines = log.split(separator: "\n")
        #expect(
            lines.contains {
                $0.hasPrefix("cribcall monitor: unpaired device connected from ") && $0.contains("connection=")
            },
            "\(log)")
        #expect(lines.contains { $0.contains("disconnected: ") && $0.contains("connection=") }, "\(log)")
        #expect(!log.contains(pin), "the PIN the monitor shows is never in its log: \(log)")
        #expect(!log.contains("PRIVATE KEY") && !log.contains("token"), "\(log)")
        #expect(
            wrong.stderrText.contains("cribcall pair: ") && !wrong.stderrText.contains(pin),
            "the listener's log neither: \(wrong.stderrText)")

        // The default level: none of it.
        let quiet = try await Subprocess.run(cribcall, pair, environment: ["CRIBCALL_LOG_LEVEL": ""])
        #expect(quiet.status == 1)
        #expect(
            quiet.stderrText.split(separator: "\n").allSatisfy { $0.contains("wrong PIN") || $0.contains("progress") },
            "only the failure itself: \(quiet.stderrText)")
    }
}
