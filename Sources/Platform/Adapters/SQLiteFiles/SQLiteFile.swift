public import Foundation
public import GRDB
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The one way a product opens its SQLite file: created owner-only without ever opening a live database, and one
/// WAL-mode `DatabasePool` per file per process, shared by everyone in the process who opens that file.
///
/// Both rules exist because of POSIX record locks, which belong to a process and an inode, not to a descriptor:
/// closing *any* descriptor of a database file releases every lock the process holds on it. SQLite protects its own
/// connections from this (it defers closing while another connection of the process holds a lock), but a raw
/// `open()`/`close()` beside a live pool — a permission fix, a second store object — silently drops the pool's
/// shared lock. Another process (`argus-hub pair`, `toukan history`) then believes it is the last user, checkpoints
/// the write-ahead log and deletes it while this process still writes to it: the database is corrupted. So:
/// - a missing file is created with `O_CREAT | O_EXCL` (a file nobody has open yet), an existing one is only
///   `chmod`ed by path, and neither is ever opened outside SQLite;
/// - ``pool(path:configuration:)`` returns the pool already open for that file in this process, if any.
public enum SQLiteFile {
    /// Weak references to the pools open in this process, by the file's canonical path.
    private static let pools = Mutex<[String: WeakPool]>([:])

    private struct WeakPool: @unchecked Sendable {
        // @unchecked: DatabasePool is itself Sendable; the weak box only adds the reference, read under the lock.
        weak var pool: DatabasePool?
    }

    /// The process's pool for the SQLite file at `path`, opening it (created 0600 when missing) if nobody in this
    /// process has it open. An existing file is set to 0600 (by path), and SQLite gives its `-wal` and `-shm` files
    /// the same mode.
    ///
    /// - Parameters:
    ///   - path: The database file; its directory must exist. A symbolic link is refused.
    ///   - configuration: Used when the pool is opened here; a pool already open keeps its own.
    /// - Returns: The pool, shared: never close it while another owner may use it (GRDB closes it when the last
    ///   reference goes).
    /// - Throws: ``SQLiteFileError`` saying which file cannot be used and why, or GRDB's error when SQLite refuses
    ///   the file (not a database).
    public static func pool(path: String, configuration: Configuration = Configuration()) throws -> DatabasePool {
        try pools.withLock { pools in
            try prepare(path: path)
            let key = canonicalPath(path)
            if let open = pools[key]?.pool { return open }
            let pool = try DatabasePool(path: path, configuration: configuration)
            pools = pools.filter { $0.value.pool != nil }
            pools[key] = WeakPool(pool: pool)
            return pool
        }
    }

    /// Whether a pool for `path` is open in this process.
    public static func isOpen(path: String) -> Bool {
        pools.withLock { $0[canonicalPath(path)]?.pool != nil }
    }

    /// Creates `path` 0600 when it is missing (exclusively: a file someone else just made is left alone), sets an
    /// existing regular file to 0600, and refuses anything that is not a regular file.
    static func prepare(path: String) throws(SQLiteFileError) {
        var status = stat()
        if lstat(path, &status) != 0 {
            guard errno == ENOENT else { throw SQLiteFileError(path: path, reason: errnoText()) }
            let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if descriptor >= 0 {
                // Nobody can hold a lock on a file that did not exist a moment ago: closing it releases nothing.
                close(descriptor)
                return
            }
            guard errno == EEXIST else { throw SQLiteFileError(path: path, reason: errnoText()) }
            guard lstat(path, &status) == 0 else { throw SQLiteFileError(path: path, reason: errnoText()) }
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw SQLiteFileError(path: path, reason: "it is not a regular file (a link, a folder or a device)")
        }
        if status.st_mode & 0o777 != 0o600, chmod(path, 0o600) != 0 {
            throw SQLiteFileError(path: path, reason: "cannot make it owner-only: \(errnoText())")
        }
    }

    private static func canonicalPath(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return URL(fileURLWithPath: path).standardizedFileURL.path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    private static func errnoText() -> String { String(cString: strerror(errno)) }
}

/// A database file that cannot be used, and why.
public struct SQLiteFileError: Error, Sendable, Hashable, CustomStringConvertible {
    public var path: String
    public var reason: String

    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    public var description: String { "cannot open the database \(path): \(reason). Choose a writable --data-dir." }
}
