import Foundation
import SystemdUnit
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The generated units checked by systemd itself: `systemd-analyze verify --user`, and the user manager's own
/// parser (`systemd --user --test`) for the exact argv it would run.
@Suite("systemd validation")
struct SystemdValidationTests {
    /// Arguments that exercise every quoting rule (newlines are covered by the table test: systemd's dump prints
    /// them raw, which this test's line-based reading cannot take apart).
    static let trickyName = "Ana's \"Baby\" room 100% $HOME ${X} C:\\dir ; bébé"

    @Test("systemd-analyze verify --user accepts both generated units with no warning")
    func verifyAccepts() async throws {
        guard let analyze = SystemdTools.analyze(for: "verifyAccepts") else { return }
        let sandbox = try SystemdSandbox()
        defer { sandbox.remove() }
        for role in CribCallServiceUnit.Role.allCases {
            let unit = try CribCallServiceUnit.unit(
                role,
                .init(
                    executable: sandbox.program, dataDirectory: URL(fileURLWithPath: "/tmp/crib data %h"),
                    name: Self.trickyName, audioSource: role == .monitor ? "test:cry" : nil,
                    port: role == .monitor ? 48081 : nil))
            let path = try sandbox.write(try unit.rendered(), named: unit.name)
            let result = try await sandbox.verify(analyze, path)
            #expect(result.status == 0, "\(result.stderrText)")
            #expect(result.stderrText.isEmpty, "systemd-analyze warned about \(unit.name): \(result.stderrText)")
        }
    }

    @Test(
        "the check has teeth: a bad setting warns, an unknown escape warns, a missing program fails",
        arguments: [
            ("Restart=on-failure", "Restart=sometimes", false),
            ("--name ", "--name \"\\q\" ", false),
            ("RestartSec=5", "RestartSec=5\nPrivateTmpp=yes", false),
            ("ExecStart=", "ExecStart=/nonexistent/cribcall ", true),
        ])
    func verifyRejects(original: String, replacement: String, fails: Bool) async throws {
        guard let analyze = SystemdTools.analyze(for: "verifyRejects") else { return }
        let sandbox = try SystemdSandbox()
        defer { sandbox.remove() }
        let unit = try CribCallServiceUnit.unit(
            .monitor,
            .init(
                executable: sandbox.program, dataDirectory: URL(fileURLWithPath: "/tmp/d"), name: "Nursery"))
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
        let settings = CribCallServiceUnit.Settings(
            executable: sandbox.program, dataDirectory: URL(fileURLWithPath: "/tmp/crib data %h $HOME"),
            name: Self.trickyName, audioSource: "", port: 48081)
        let unit = try CribCallServiceUnit.unit(.monitor, settings)
        let units = sandbox.root.appendingPathComponent("config/systemd/user")
        try UnitFileInstaller.install(try unit.rendered(), named: unit.name, in: units, force: false)
        let result = try await sandbox.dump(manager, unit: unit.name)
        let line = try #require(
            SystemdTools.commandLine(of: unit.name, in: result.stdoutText),
            "no ExecStart in the dump: \(result.stderrText)")
        // The dump shows argv after unquoting and specifier expansion, before variable expansion at exec time.
        let argv = SystemdTools.shellWords(line).map(SystemdTools.expandingVariables)
        #expect(argv == [settings.executable] + unit.arguments)
        #expect(argv.contains(Self.trickyName))
    }
}

/// A temporary directory with a real program for ExecStart= and a runtime directory for the user manager.
private struct SystemdSandbox {
    let root: URL
    let program: String
    let runtime: URL

    init() throws {
        root = try Subprocess.temporaryDirectory("systemd-unit")
        let bin = root.appendingPathComponent("crib bin %d")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        program = bin.appendingPathComponent("cribcall").path
        try FileManager.default.copyItem(atPath: "/bin/true", toPath: program)
        runtime = root.appendingPathComponent("run")
        try FileManager.default.createDirectory(
            at: runtime, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
    }

    func write(_ text: String, named name: String) throws -> String {
        let units = root.appendingPathComponent("units")
        try UnitFileInstaller.install(text, named: name, in: units, force: true)
        return units.appendingPathComponent(name).path
    }

    /// `systemd-analyze verify --user` needs a runtime directory to set up its (offline) user manager.
    func verify(_ analyze: String, _ path: String) async throws -> Subprocess.Result {
        try await Subprocess.run(
            analyze, ["verify", "--user", "--man=no", path],
            environment: ["XDG_RUNTIME_DIR": runtime.path, "SYSTEMD_PAGER": ""])
    }

    /// `systemd --user --test` loads the user's units and dumps them. It refuses to run as root, so as root it runs
    /// as `nobody` (the sandbox is world-readable, the runtime directory is given to nobody).
    func dump(_ manager: String, unit: String) async throws -> Subprocess.Result {
        let environment = [
            "HOME": root.path, "XDG_CONFIG_HOME": root.appendingPathComponent("config").path,
            "XDG_RUNTIME_DIR": runtime.path,
        ]
        let arguments = ["--user", "--test", "--unit=\(unit)", "--log-target=console", "--log-level=warning"]
        if getuid() == 0 {
            let nobody = getpwnam("nobody")
            guard let nobody else { throw PeerFailure("no user 'nobody' to run the user manager as") }
            _ = chown(runtime.path, nobody.pointee.pw_uid, nobody.pointee.pw_gid)
            return try await Subprocess.run(
                "setpriv",
                [
                    "--reuid=\(nobody.pointee.pw_uid)", "--regid=\(nobody.pointee.pw_gid)", "--clear-groups",
                    manager,
                ] + arguments, environment: environment)
        }
        return try await Subprocess.run(manager, arguments, environment: environment)
    }

    func remove() {
        try? FileManager.default.removeItem(at: root)
    }
}

private struct PeerFailure: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) {
        self.description = description
    }
}

enum SystemdTools {
    /// `systemd-analyze`, or nil after a loud skip (a failure when the run requires every tool).
    static func analyze(for test: String) -> String? {
        if let path = try? Subprocess.resolve("systemd-analyze") { return path }
        return missing("systemd-analyze (Debian package systemd)", test: test)
    }

    /// The systemd manager binary, for `--user --test`.
    static func manager(for test: String) -> String? {
        if let path = ["/lib/systemd/systemd", "/usr/lib/systemd/systemd"].first(where: {
            FileManager.default.isExecutableFile(atPath: $0)
        }) {
            if getuid() != 0 || (try? Subprocess.resolve("setpriv")) != nil { return path }
            return missing("setpriv (Debian package util-linux)", test: test)
        }
        return missing("/lib/systemd/systemd (Debian package systemd)", test: test)
    }

    private static func missing(_ what: String, test: String) -> String? {
        if InteropPeers.required {
            Issue.record("\(test) needs \(what)")
        } else {
            FileHandle.standardError.write(Data("WARNING: SKIPPING \(test): \(what) is not installed.\n".utf8))
        }
        return nil
    }

    /// The `Command Line:` of the unit's ExecStart in a `systemd --test` dump.
    static func commandLine(of unit: String, in dump: String) -> String? {
        var inUnit = false
        var inExecStart = false
        for line in dump.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("-> Unit ") {
                inUnit = trimmed == "-> Unit \(unit):"
                inExecStart = false
            } else if inUnit, trimmed.hasPrefix("-> ") {
                inExecStart = trimmed == "-> ExecStart:"
            } else if inUnit, inExecStart, trimmed.hasPrefix("Command Line: ") {
                return String(trimmed.dropFirst("Command Line: ".count))
            }
        }
        return nil
    }

    /// What the manager does to an argument when it runs the command: `$$` → `$`; `$NAME` and `${NAME}` are
    /// replaced by a variable's value, shown here as `<variable>` so that an unescaped `$` cannot go unnoticed.
    static func expandingVariables(_ word: String) -> String {
        var out = ""
        var characters = word[...]
        while let character = characters.popFirst() {
            guard character == "$", let next = characters.first else {
                out.append(character)
                continue
            }
            if next == "$" {
                characters.removeFirst()
                out.append("$")
            } else if next == "{" || next.isLetter || next == "_" {
                out += "<variable>"
            } else {
                out.append(character)
            }
        }
        return out
    }

    /// Splits systemd's `quote_command_line()` output: words separated by spaces, double-quoted words with
    /// backslash escapes.
    static func shellWords(_ line: String) -> [String] {
        var words: [String] = []
        var current = ""
        var inWord = false
        var quoted = false
        var escaped = false
        for character in line {
            if escaped {
                current.append(character)
                escaped = false
            } else if quoted {
                if character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    quoted = false
                } else {
                    current.append(character)
                }
            } else if character == " " {
                if inWord { words.append(current) }
                current = ""
                inWord = false
            } else if character == "\"" {
                quoted = true
                inWord = true
            } else {
                current.append(character)
                inWord = true
            }
        }
        if inWord { words.append(current) }
        return words
    }
}
