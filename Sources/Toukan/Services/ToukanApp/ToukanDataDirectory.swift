import DeviceIdentityStore
public import Foundation
import ToukanCore

/// Toukan's data directory (`--data-dir`): `recordings/` (the audio, never deleted before a confirmed upload), the
/// ledger, the daemon's control socket and its log.
public struct ToukanDataDirectory: Sendable {
    public let url: URL

    /// `path`, or `$XDG_DATA_HOME/toukan` (default `~/.local/share/toukan`) when nil.
    public init(path: String?) {
        url =
            path.map { URL(fileURLWithPath: $0, isDirectory: true).standardizedFileURL }
            ?? DataDirectory.defaultURL(product: "toukan")
    }

    /// What `--data-dir`'s help says.
    public static let help = "Data directory (default: $XDG_DATA_HOME/toukan or ~/.local/share/toukan)."

    /// Where recordings are written: `toukan_<UTC time>.m4a`, `.m4a.part` while recording.
    public var recordings: URL { url.appendingPathComponent("recordings", isDirectory: true) }

    /// The daemon's control socket.
    public var socket: URL { url.appendingPathComponent("toukan.sock") }

    /// The upload server, as `--server` last gave it.
    public var serverFile: URL { url.appendingPathComponent("server") }

    /// The server uploads go to: the remembered one, else `TOUKAN_SERVER`; nil when neither is set.
    var uploadServer: URL? {
        if let text = try? String(contentsOf: serverFile, encoding: .utf8) {
            return URL(string: text.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        return ProcessInfo.processInfo.environment["TOUKAN_SERVER"].flatMap(URL.init(string:))
    }

    /// Recordings whose recorder died before saving them (`….m4a.part`), oldest first.
    func partialFiles() -> [URL] {
        files(endingWith: RecordingName.fileExtension + ".part")
    }

    /// Saved recordings on disk (`….m4a`), oldest first.
    func savedFiles() -> [URL] {
        files(endingWith: RecordingName.fileExtension)
    }

    private func files(endingWith suffix: String) -> [URL] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: recordings.path)) ?? []
        return names.filter { $0.hasSuffix(suffix) }.sorted().map { recordings.appendingPathComponent($0) }
    }

    /// The daemon's diagnostics (it has no terminal).
    public var log: URL { url.appendingPathComponent("daemon.log") }

    /// Creates the directory and `recordings/` (0700) if missing.
    func create() throws {
        for directory in [url, recordings] where !FileManager.default.fileExists(atPath: directory.path) {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
    }

    /// Free bytes on the file system of `recordings/`.
    func freeBytes() -> Int64 {
        let attributes = try? FileManager.default.attributesOfFileSystem(forPath: recordings.path)
        return (attributes?[.systemFreeSize] as? NSNumber)?.int64Value ?? 0
    }
}
