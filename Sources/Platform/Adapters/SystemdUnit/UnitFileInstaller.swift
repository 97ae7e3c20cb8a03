public import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes unit files into a systemd user unit directory: atomically, mode 0644, never replacing a different unit
/// unless told to.
public enum UnitFileInstaller {
    /// What ``install(_:named:in:force:)`` did.
    public enum Outcome: Sendable, Hashable {
        /// There was no unit with that name; it was written.
        case created
        /// The same text was already there; nothing was written.
        case unchanged
        /// A different unit was there and `force` replaced it.
        case replaced
    }

    /// The directory the user manager loads the user's own units from: `$XDG_CONFIG_HOME/systemd/user`, or
    /// `~/.config/systemd/user` when `XDG_CONFIG_HOME` is unset or not absolute.
    ///
    /// - Parameter environment: The process environment.
    public static func defaultDirectory(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> URL {
        let config: URL
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") {
            config = URL(fileURLWithPath: xdg, isDirectory: true)
        } else {
            let home = environment["HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? NSHomeDirectory()
            config = URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent(".config", isDirectory: true)
        }
        return config.appendingPathComponent("systemd/user", isDirectory: true)
    }

    /// Writes `text` as `directory/name`, creating the directory when needed.
    ///
    /// The file is written to a temporary name in the same directory with mode 0644, flushed, and renamed over the
    /// old one, so systemd never sees a half-written unit.
    ///
    /// - Parameters:
    ///   - text: The unit file's text.
    ///   - name: The file name, e.g. `cribcall-monitor.service`.
    ///   - directory: The unit directory.
    ///   - force: Replace an existing file with different text.
    /// - Returns: What was done.
    /// - Throws: ``SystemdUnitError`` `unitExists` when a different file is there and `force` is false,
    ///   `writeFailed` when the directory or file cannot be written.
    @discardableResult
    public static func install(_ text: String, named name: String, in directory: URL, force: Bool) throws -> Outcome {
        let target = directory.appendingPathComponent(name)
        let existing = FileManager.default.contents(atPath: target.path)
        if let existing {
            if existing == Data(text.utf8) {
                try ensureMode(target.path)
                return .unchanged
            }
            guard force else {
                throw SystemdUnitError(
                    .unitExists,
                    "\(target.path) already exists with different settings; pass --force to replace it")
            }
        }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw SystemdUnitError(.writeFailed, "cannot create \(directory.path): \(error.localizedDescription)")
        }
        try writeAtomically(Data(text.utf8), to: target)
        return existing == nil ? .created : .replaced
    }

    /// Installs `unit` into `directory` (default: the user manager's) and says what happened and what to run next:
    /// `Wrote|Replaced|Already up to date: PATH`, `Next:` and the indented commands.
    ///
    /// - Throws: ``SystemdUnitError`` as ``install(_:named:in:force:)`` and ``UserServiceUnit/rendered()`` do.
    public static func installReport(_ unit: UserServiceUnit, in directory: URL?, force: Bool) throws -> String {
        let directory = directory?.standardizedFileURL ?? defaultDirectory()
        let outcome = try install(try unit.rendered(), named: unit.name, in: directory, force: force)
        let what =
            switch outcome {
            case .created: "Wrote"
            case .replaced: "Replaced"
            case .unchanged: "Already up to date:"
            }
        let lines =
            ["\(what) \(directory.appendingPathComponent(unit.name).path)", "Next:"]
            + nextSteps(for: unit.name, in: directory).map { "  " + $0 }
        return lines.joined(separator: "\n")
    }

    /// The commands that load, enable and start the unit, and keep it running without a login session.
    ///
    /// - Parameters:
    ///   - name: The unit file name.
    ///   - directory: Where it was written; a directory outside the user manager's search path gets a
    ///     `systemctl --user link` first.
    ///   - environment: For the default directory.
    public static func nextSteps(
        for name: String, in directory: URL, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> [String] {
        var steps: [String] = []
        if directory.standardizedFileURL.path != defaultDirectory(environment: environment).standardizedFileURL.path {
            steps.append("systemctl --user link \(shellQuoted(directory.appendingPathComponent(name).path))")
        }
        steps.append("systemctl --user daemon-reload")
        steps.append("systemctl --user enable --now \(name)")
        steps.append("loginctl enable-linger \"$USER\"   # keep it running without a login session, and at boot")
        steps.append("journalctl --user -u \(name) -f   # follow its output")
        return steps
    }

    private static func writeAtomically(_ data: Data, to target: URL) throws {
        let directory = target.deletingLastPathComponent().path
        let temporary = "\(directory)/.\(target.lastPathComponent).\(getpid()).\(UInt32.random(in: 0...UInt32.max))"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw failure("cannot create \(temporary)") }
        var ok = fchmod(descriptor, 0o644) == 0  // the umask may have removed bits
        ok =
            ok
            && data.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        return false
                    }
                    offset += written
                }
                return true
            }
        ok = ok && fsync(descriptor) == 0
        let error = failure("cannot write \(temporary)")
        close(descriptor)
        guard ok else {
            unlink(temporary)
            throw error
        }
        guard rename(temporary, target.path) == 0 else {
            let error = failure("cannot rename \(temporary) to \(target.path)")
            unlink(temporary)
            throw error
        }
    }

    private static func ensureMode(_ path: String) throws {
        guard chmod(path, 0o644) == 0 else { throw failure("cannot set the mode of \(path)") }
    }

    private static func failure(_ what: String) -> SystemdUnitError {
        SystemdUnitError(.writeFailed, "\(what): \(String(cString: strerror(errno)))")
    }

    private static func shellQuoted(_ text: String) -> String {
        let safe = text.unicodeScalars.allSatisfy { scalar in
            switch scalar {
            case "A"..."Z", "a"..."z", "0"..."9", "_", ".", "/", "-", "+", ",", ":", "=", "@": true
            default: false
            }
        }
        return safe ? text : "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
