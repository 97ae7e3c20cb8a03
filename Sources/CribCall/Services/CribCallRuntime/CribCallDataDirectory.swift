public import CribCallStore
public import DeviceIdentityStore
public import Foundation

/// A CribCall device's data directory (`--data-dir`; an Argus hub keeps one inside its own): the identity files and
/// `cribcall.sqlite`. The management commands (`listeners`, `settings`, `pairing`) only touch the database, so they
/// work from another terminal while `cribcall monitor` runs with the same data directory.
public struct CribCallDataDirectory: Sendable {
    /// The directory; it may not exist yet.
    public let url: URL

    /// `path`, or `$XDG_DATA_HOME/cribcall` (default `~/.local/share/cribcall`) when nil.
    public init(path: String?) {
        url = path.map { URL(fileURLWithPath: $0, isDirectory: true) } ?? DataDirectory.defaultURL(product: "cribcall")
    }

    /// What `--data-dir`'s help says.
    public static let help = "Data directory (default: $XDG_DATA_HOME/cribcall or ~/.local/share/cribcall)."

    /// The running monitor's control socket (`cribcall alert trigger` reaches it there).
    public var controlSocket: URL {
        url.appendingPathComponent("monitor.sock")
    }

    /// The database file inside ``url``.
    public var databaseURL: URL {
        url.appendingPathComponent(CribCallDatabase.fileName)
    }

    /// The device identity, created (keys 0600 in a 0700 directory) on first use.
    public func identity() throws -> DeviceIdentityStore.Loaded {
        try DeviceIdentityStore(directory: url).loadOrCreate()
    }

    /// Opens the database, creating it as needed (the long-running commands).
    public func database() throws -> CribCallDatabase {
        try CribCallDatabase(directory: url)
    }

    /// Opens the database for a read-only command, or returns nil when it does not exist yet.
    ///
    /// Creates nothing: a missing directory or database means "nothing stored yet".
    public func existingDatabase() throws -> CribCallDatabase? {
        guard FileManager.default.fileExists(atPath: databaseURL.path) else { return nil }
        return try CribCallDatabase(directory: url)
    }

    /// Opens the database for a command that writes, creating the directory (mode 0700) and the file as needed.
    public func databaseCreatingIfNeeded() throws -> CribCallDatabase {
        var isDirectory: ObjCBool = false
        if !FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) {
            try FileManager.default.createDirectory(
                at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        return try CribCallDatabase(directory: url)
    }
}
