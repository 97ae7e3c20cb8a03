public import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A temporary directory with a real program for ExecStart= and a runtime directory for the user manager.
public struct SystemdSandbox {
    public let root: URL
    /// A copy of /bin/true in a directory whose name needs quoting and escaping, for ExecStart=.
    public let program: String
    let runtime: URL

    public init() throws {
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

    /// Writes `text` as `name` into the sandbox's unit directory and returns its path.
    public func write(_ text: String, named name: String) throws -> String {
        let units = root.appendingPathComponent("units")
        try FileManager.default.createDirectory(at: units, withIntermediateDirectories: true)
        let file = units.appendingPathComponent(name)
        try Data(text.utf8).write(to: file)
        return file.path
    }

    /// Checks that `systemd-analyze verify --user` accepts `text` as unit `name` without any warning.
    public func expectAccepted(_ text: String, named name: String, by analyze: String) async throws {
        let result = try await verify(analyze, try write(text, named: name))
        #expect(result.status == 0, "\(result.stderrText)")
        #expect(result.stderrText.isEmpty, "systemd-analyze warned about \(name): \(result.stderrText)")
    }

    /// `systemd-analyze verify --user` needs a runtime directory to set up its (offline) user manager.
    public func verify(_ analyze: String, _ path: String) async throws -> Subprocess.Result {
        try await Subprocess.run(
            analyze, ["verify", "--user", "--man=no", path],
            environment: ["XDG_RUNTIME_DIR": runtime.path, "SYSTEMD_PAGER": ""])
    }

    /// `systemd --user --test` loads the user's units and dumps them. It refuses to run as root, so as root it runs
    /// as `nobody` (the sandbox is world-readable, the runtime directory is given to nobody).
    public func dump(_ manager: String, unit: String) async throws -> Subprocess.Result {
        let environment = [
            "HOME": root.path, "XDG_CONFIG_HOME": root.appendingPathComponent("config").path,
            "XDG_RUNTIME_DIR": runtime.path,
        ]
        let arguments = ["--user", "--test", "--unit=\(unit)", "--log-target=console", "--log-level=warning"]
        if getuid() == 0 {
            let nobody = getpwnam("nobody")
            guard let nobody else { throw PeerFailure("no user 'nobody' to run the user manager as") }
            try openToEveryone()
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

    /// Makes every directory of the sandbox searchable and every file readable by `nobody`, whatever the umask of
    /// the process that created them (a restrictive one left `config/systemd` closed to the user manager:
    /// "Failed to open configuration file …/config/systemd/user.conf: Permission denied").
    func openToEveryone() throws {
        let manager = FileManager.default
        var paths = [root.path]
        if let walker = manager.enumerator(atPath: root.path) {
            while let relative = walker.nextObject() as? String {
                paths.append(root.appendingPathComponent(relative).path)
            }
        }
        for path in paths where path != runtime.path {
            var isDirectory: ObjCBool = false
            guard manager.fileExists(atPath: path, isDirectory: &isDirectory) else { continue }
            let executable = isDirectory.boolValue || path == program
            try manager.setAttributes([.posixPermissions: executable ? 0o755 : 0o644], ofItemAtPath: path)
        }
    }

    public func remove() {
        try? FileManager.default.removeItem(at: root)
    }
}

private struct PeerFailure: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) {
        self.description = description
    }
}

/// The systemd programs the unit tests check against, and readers of what they print.
public enum SystemdTools {
    /// `systemd-analyze`, or nil after a loud skip (a failure when the run requires every tool).
    public static func analyze(for test: String) -> String? {
        if let path = try? Subprocess.resolve("systemd-analyze") { return path }
        return missing("systemd-analyze (Debian package systemd)", test: test)
    }

    /// The systemd manager binary, for `--user --test`.
    public static func manager(for test: String) -> String? {
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
    public static func commandLine(of unit: String, in dump: String) -> String? {
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
    public static func expandingVariables(_ word: String) -> String {
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
    public static func shellWords(_ line: String) -> [String] {
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
