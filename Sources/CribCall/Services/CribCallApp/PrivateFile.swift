import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A file that holds a secret for a while (the running app's address, a pairing QR code), readable by its owner
/// only.
///
/// Each write creates the file anew: mode 0600, `O_CREAT | O_EXCL` (never an existing file's inode or permissions),
/// `O_NOFOLLOW` (never through a symbolic link), `O_CLOEXEC` (no child process inherits it). A regular file already
/// at the path (left by a run that was killed) is removed first; anything else there, a symbolic link above all, is
/// refused and left as it is, so its target is never touched.
struct PrivateFile: Sendable {
    /// Why the file was not written.
    enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The path holds something other than a regular file (`kind`: "a symbolic link", "a directory", …).
        case notARegularFile(path: String, kind: String)
        /// The system refused `operation` (e.g. "create") with `reason` (its `strerror`).
        case system(path: String, operation: String, reason: String)

        var description: String {
            switch self {
            case .notARegularFile(let path, let kind):
                "\(path) is \(kind), not a regular file: refusing to write a secret through it (left untouched); "
                    + "remove it or choose another file"
            case .system(let path, let operation, let reason):
                "cannot \(operation) \(path): \(reason)"
            }
        }
    }

    /// The file's path.
    let path: String

    init(path: String) {
        self.path = path
    }

    /// Checks that ``write(_:)`` would not refuse the path: nothing is there, or a regular file. A long-running
    /// command checks at its start, so a wrong path is reported before anything runs.
    ///
    /// - Throws: ``Failure/notARegularFile(path:kind:)`` when something else is there.
    func checkReplaceable() throws(Failure) {
        var status = stat()
        guard lstat(path, &status) == 0 else { return }  // nothing there (or unreadable: creating will say why)
        let kind: String
        switch status.st_mode & S_IFMT {
        case S_IFREG: return
        case S_IFLNK: kind = "a symbolic link"
        case S_IFDIR: kind = "a directory"
        default: kind = "a special file"
        }
        throw .notARegularFile(path: path, kind: kind)
    }

    /// Writes `contents` to a new file of mode 0600, replacing a regular file at the path.
    ///
    /// A file only partly written is removed.
    /// - Throws: ``Failure/notARegularFile(path:kind:)`` (nothing written) when a symbolic link or anything else but
    ///   a regular file is at the path; ``Failure/system(path:operation:reason:)`` when the file cannot be removed,
    ///   created or written.
    func write(_ contents: Data) throws(Failure) {
        try checkReplaceable()
        // unlink removes a symbolic link put here since the check, never its target; O_EXCL | O_NOFOLLOW then refuse
        // whatever appears before the file is created.
        if unlink(path) != 0, errno != ENOENT { throw systemFailure("replace") }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            if errno == EEXIST || errno == ELOOP {
                throw .notARegularFile(path: path, kind: "something that appeared while it was being replaced")
            }
            throw systemFailure("create")
        }
        // The umask can only take permissions away; this makes them exactly read and write for the owner.
        _ = fchmod(descriptor, 0o600)
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        do {
            try handle.write(contentsOf: contents)
            try handle.close()
        } catch {
            unlink(path)
            throw .system(path: path, operation: "write", reason: error.localizedDescription)
        }
    }

    /// Removes the file: nothing happens when none is there, and a symbolic link put in its place is removed itself,
    /// never followed.
    func remove() {
        unlink(path)
    }

    private func systemFailure(_ operation: String) -> Failure {
        .system(path: path, operation: operation, reason: String(cString: strerror(errno)))
    }
}
