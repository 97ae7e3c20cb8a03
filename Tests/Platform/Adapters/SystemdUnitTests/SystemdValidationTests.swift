import Foundation
import SystemdUnit
import TestSupport
import Testing

/// The generated units checked by systemd itself: `systemd-analyze verify --user`, and the user manager's own
/// parser (`systemd --user --test`) for the exact argv it would run. (CribCall's two units:
/// `Tests/CribCall/Adapters/CribCallSystemdTests`.)
@Suite("systemd validation")
struct SystemdValidationTests {
    /// Arguments that exercise every quoting rule (newlines are covered by the table test: systemd's dump prints
    /// them raw, which this test's line-based reading cannot take apart).
    static let trickyName = "Ana's \"Baby\" room 100% $HOME ${X} C:\\dir ; bébé"

    /// A unit of a made-up program, with tricky arguments and data directory.
    static func unit(_ program: String, dataDirectory: String = "/tmp/crib data %h") -> UserServiceUnit {
        UserServiceUnit(
            name: "homeapps-test.service", description: "HomeApps test \"\(trickyName)\"", executable: program,
            arguments: ["serve", "--data-dir", dataDirectory, "--name", trickyName, "--source", ""],
            restartSeconds: 7, generator: "homeapps-test install-service")
    }

    @Test("systemd-analyze verify --user accepts a generated unit with no warning")
    func verifyAccepts() async throws {
        guard let analyze = SystemdTools.analyze(for: "verifyAccepts") else { return }
        let sandbox = try SystemdSandbox()
        defer { sandbox.remove() }
        let unit = Self.unit(sandbox.program)
        try await sandbox.expectAccepted(try unit.rendered(), named: unit.name, by: analyze)
    }

    @Test(
        "the check has teeth: a bad setting warns, an unknown escape warns, a missing program fails",
        arguments: [
            ("Restart=on-failure", "Restart=sometimes", false),
            ("--name ", "--name \"\\q\" ", false),
            ("RestartSec=7", "RestartSec=7\nPrivateTmpp=yes", false),
            ("ExecStart=", "ExecStart=/nonexistent/cribcall ", true),
        ])
    func verifyRejects(original: String, replacement: String, fails: Bool) async throws {
        guard let analyze = SystemdTools.analyze(for: "verifyRejects") else { return }
        let sandbox = try SystemdSandbox()
        defer { sandbox.remove() }
        let unit = Self.unit(sandbox.program)
        let text = try unit.rendered()
        #expect(text.contains(original))
        let broken = text.replacingOccurrences(of: original, with: replacement)
        let result = try await sandbox.verify(analyze, try sandbox.write(broken, named: unit.name))
        #expect(!result.stderrText.isEmpty)
        #expect((result.status != 0) == fails, "\(result.stderrText)")
    }

    @Test("the user manager parses ExecStart= back into exactly the arguments given")
    func roundTrip() async throws {
        guard let manager = SystemdTools.manager(for: "roundTrip") else { return }
        let sandbox = try SystemdSandbox()
        defer { sandbox.remove() }
        let unit = Self.unit(sandbox.program, dataDirectory: "/tmp/crib data %h $HOME")
        let units = sandbox.root.appendingPathComponent("config/systemd/user")
        try UnitFileInstaller.install(try unit.rendered(), named: unit.name, in: units, force: false)
        let result = try await sandbox.dump(manager, unit: unit.name)
        let line = try #require(
            SystemdTools.commandLine(of: unit.name, in: result.stdoutText),
            "no ExecStart in the dump: \(result.stderrText)")
        // The dump shows argv after unquoting and specifier expansion, before variable expansion at exec time.
        let argv = SystemdTools.shellWords(line).map(SystemdTools.expandingVariables)
        #expect(argv == [unit.executable] + unit.arguments)
        #expect(argv.contains(Self.trickyName))
    }
}
