import CanonicalJSON
import Foundation
import TestSupport
import Testing

/// A monitor chooses its own name, and the listener prints it (issue 17 item 6): through the built executables, a
/// monitor named with an ANSI escape sequence and a right-to-left override is paired, listed and listened to; no
/// text output carries what would drive the terminal or reorder the line, and `--json` keeps the name exact.
@Suite(
    "A hostile monitor name through cribcall pair, monitors and listen", .serialized,
    .heavy(cores: 0.5, "a monitor and a listener"))
struct MonitorNameOutputTests {
    static let hostile = "Nurs\u{1B}[2Jery\u{202E}gpj.exe"
    static let shown = "Nurs[2Jerygpj.exe"

    /// Whether `text` holds ESC, the C1 CSI or a bidirectional control (newlines apart, any control character).
    static func unsafe(_ text: String) -> Bool {
        text.unicodeScalars.contains { scalar in
            (scalar.value < 0x20 && scalar != "\n") || (0x7F...0x9F).contains(scalar.value)
                || (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
                || [0x200E, 0x200F, 0x061C].contains(scalar.value)
        }
    }

    @Test("pair, monitors list and listen show the name safely; monitors list --json keeps it exact")
    func hostileName() async throws {
        let directory = try Subprocess.temporaryDirectory("cribcall-names")
        defer { try? FileManager.default.removeItem(at: directory) }
        let listener = directory.appendingPathComponent("listener")
        let monitor = try await PairingMonitor.start(
            data: directory.appendingPathComponent("monitor"), ["--name", Self.hostile])
        defer { Task { await monitor.process.stop() } }

        let pair = try await monitor.pair(listener: listener)
        #expect(pair.status == 0, "pair: \(pair.stdoutText) \(pair.stderrText)")
        #expect(!Self.unsafe(pair.stdoutText), "pair: \(pair.stdoutText.debugDescription)")
        #expect(pair.stdoutText.hasPrefix("Paired with \"\(Self.shown)\""), "pair: \(pair.stdoutText.debugDescription)")

        let list = try await PairingMonitor.cribcall(["monitors", "list", "--data-dir", listener.path])
        #expect(list.status == 0, "monitors list: \(list.stderrText)")
        #expect(!Self.unsafe(list.stdoutText), "monitors list: \(list.stdoutText.debugDescription)")
        #expect(list.stdoutText.contains(Self.shown), "monitors list: \(list.stdoutText.debugDescription)")

        let json = try await PairingMonitor.cribcall(["monitors", "list", "--json", "--data-dir", listener.path])
        #expect(!json.stdoutText.utf8.contains(0x1B), "a raw ESC in --json: \(json.stdoutText.debugDescription)")
        let object = try JSONParser().parse(Array(json.stdoutText.trimmingCharacters(in: .newlines).utf8))
        #expect(object["name"] == .string(Self.hostile), "--json keeps the name exact")

        let listen = try BackgroundProcess(
            try Subprocess.builtProduct("cribcall"),
            ["listen", "--no-notify", "--name", "Dad's laptop", "--data-dir", listener.path])
        defer { Task { await listen.stop() } }
        let connected = try await listen.ready("cribcall listen") { $0.hasPrefix("Connected to ") }
        #expect(connected.hasPrefix("Connected to \"\(Self.shown)\" at "), "\(connected.debugDescription)")
        await listen.stop(grace: .seconds(10))
        await monitor.process.stop(grace: .seconds(20))  // before the data directories are removed
        #expect(!listen.output.contains(where: Self.unsafe), "listen: \(listen.output.debugDescription)")
    }
}
