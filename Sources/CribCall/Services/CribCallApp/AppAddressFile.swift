import CanonicalJSON
public import CribCallRuntime
import Foundation
import Terminal

/// The running app's address, with its secret, in the data directory (`app-url`, a ``PrivateFile``: mode 0600,
/// created anew, no symlink followed): `cribcall open` and the desktop entry read it, so the secret never has to be
/// printed where logs keep it (a systemd service's output goes to the journal). Removed when the app stops.
struct AppAddressFile: Sendable {
    let url: URL

    init(in data: CribCallDataDirectory) {
        url = data.url.appendingPathComponent("app-url")
    }

    /// Writes `address` (replacing a file left by a run that was killed).
    /// - Throws: ``CommandFailure`` when the file cannot be created (or something other than a regular file is
    ///   there).
    func write(_ address: String) throws {
        do {
            try PrivateFile(path: url.path).write(Data((address + "\n").utf8))
        } catch {
            throw CommandFailure(error.description)
        }
    }

    /// The address, or nil when no app runs for this data directory.
    func read() -> String? {
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { return nil }
        let address = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return address.hasPrefix("http://127.0.0.1:") || address.hasPrefix("http://[::1]:") ? address : nil
    }

    /// Removes the file, if it still holds `address` (a newer run may have replaced it).
    func remove(ifHolding address: String) {
        if read() == address { PrivateFile(path: url.path).remove() }
    }
}

extension AppAddressFile {
    /// Remembers `address` for `cribcall open` and returns the line that announces the app. The address holds the
    /// run's secret, so it is shown only on a terminal or to a script (`--json`); elsewhere (a service's output goes
    /// to the journal) the line names the file that holds it.
    static func announce(_ address: String, in data: CribCallDataDirectory, json: Bool) -> String {
        let file = AppAddressFile(in: data)
        let written = (try? file.write(address)) != nil
        if json {
            return JSONValue.object([
                "event": "web", "url": .string(address), "file": written ? .string(file.url.path) : .null,
            ]).canonicalString
        }
        if TerminalOutput.isInteractive || !written {
            return "The app for parents: open \(address) in a browser on this machine."
        }
        return "The app for parents is running: `cribcall open` opens it (its address is in \(file.url.path))."
    }
}

/// `cribcall open`: opens the running app in its own window (Chromium's `--app` where installed, else the default
/// browser), or prints its address.
public enum OpenCommand {
    /// - Throws: ``CommandFailure`` when no app runs for `data` or no browser can be started.
    public static func run(in data: CribCallDataDirectory, print: Bool) throws -> String? {
        guard let address = AppAddressFile(in: data).read() else {
            throw CommandFailure(
                "the app is not running for \(data.url.path): start `cribcall monitor --web 0` "
                    + "(or `cribcall install-service monitor --web 0`) first")
        }
        if print { return address }
        let candidates: [(String, [String])] = [
            ("chromium", ["--app=\(address)"]), ("chromium-browser", ["--app=\(address)"]),
            ("google-chrome", ["--app=\(address)"]), ("xdg-open", [address]),
        ]
        for (program, arguments) in candidates {
            guard let path = executable(named: program) else { continue }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: path)
            process.arguments = arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            do {
                try process.run()
                return nil
            } catch {
                continue
            }
        }
        throw CommandFailure(
            "no browser found (chromium or xdg-open): open the address from `cribcall open --print` yourself")
    }

    private static func executable(named name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}
