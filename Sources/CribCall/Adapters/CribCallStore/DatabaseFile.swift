import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Creates the database file owner-only before SQLite opens it.
enum DatabaseFile {
    /// Creates `path` with mode 0600 if it does not exist, and tightens an existing file to 0600.
    ///
    /// SQLite gives the `-wal` and `-shm` files the main file's permissions, so they are owner-only too.
    static func prepare(path: String) throws(CribCallStoreError) {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw .cannotOpen(path: path, reason: String(cString: strerror(errno)))
        }
        defer { close(descriptor) }
        guard fchmod(descriptor, 0o600) == 0 else {
            throw .cannotOpen(path: path, reason: String(cString: strerror(errno)))
        }
    }
}
