import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// File primitives for secrets: a private directory (0700) and files created 0600 from the first byte,
/// written to a temporary name, flushed and renamed into place, so a crash never leaves half a key.
enum PrivateFiles {
    /// Creates the directory (and its parents) if needed and makes sure only the owner can enter it.
    static func ensurePrivateDirectory(_ url: URL) throws(IdentityStoreError) {
        let path = url.path
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw IdentityStoreError(
                .cannotWrite,
                path: path,
                "cannot create the data directory: \(error.localizedDescription). Choose a writable --data-dir."
            )
        }
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            let permissions = (attributes[.posixPermissions] as? NSNumber)?.intValue
        else {
            throw IdentityStoreError(.cannotRead, path: path, "cannot inspect the data directory")
        }
        guard attributes[.type] as? FileAttributeType == .typeDirectory else {
            throw IdentityStoreError(.cannotWrite, path: path, "the data directory path is not a directory")
        }
        if permissions & 0o077 != 0, chmod(path, 0o700) != 0 {
            throw IdentityStoreError(
                .cannotWrite,
                path: path,
                "the data directory is open to other users and cannot be restricted (\(errnoText())); "
                    + "run: chmod 700 \(path)"
            )
        }
    }

    /// Whether a file exists at the URL (following symbolic links).
    static func exists(_ url: URL) -> Bool {
        FileManager.default.fileExists(atPath: url.path)
    }

    /// Reads a secret file after checking that no other user can read it.
    static func readPrivate(_ url: URL) throws(IdentityStoreError) -> String {
        let path = url.path
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            let permissions = (attributes[.posixPermissions] as? NSNumber)?.intValue
        else {
            throw IdentityStoreError(.cannotRead, path: path, "cannot read the file's permissions")
        }
        guard permissions & 0o077 == 0 else {
            let mode = String(permissions & 0o777, radix: 8)
            throw IdentityStoreError(
                .insecurePermissions,
                path: path,
                "holds a secret but is readable by other users (mode \(mode)); "
                    + "run: chmod 600 \(path) — and consider the secret exposed if others had access"
            )
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw IdentityStoreError(.cannotRead, path: path, "cannot read the file")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw IdentityStoreError(.corrupt, path: path, "is not text (expected PEM blocks)")
        }
        return text
    }

    /// Writes `contents` to `url` atomically with mode 0600. Refuses to replace an existing file.
    static func writeNewPrivate(_ contents: String, to url: URL) throws(IdentityStoreError) {
        let path = url.path
        let temporary = path + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw IdentityStoreError(.cannotWrite, path: temporary, "cannot create: \(errnoText())")
        }
        // The handle owns the descriptor from here on; `close()` releases it on every path.
        let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        do {
            try handle.write(contentsOf: Array(contents.utf8))
        } catch {
            let reason = Self.reason(error)
            try? handle.close()
            unlink(temporary)
            throw IdentityStoreError(.cannotWrite, path: temporary, "cannot write: \(reason)")
        }
        do {
            try handle.synchronize()
        } catch {
            let reason = Self.reason(error)
            try? handle.close()
            unlink(temporary)
            throw IdentityStoreError(.cannotWrite, path: temporary, "cannot flush to disk: \(reason)")
        }
        try? handle.close()
        // link(2) fails if the destination exists, so two processes starting at once cannot overwrite each other.
        guard link(temporary, path) == 0 else {
            let reason = errnoText()
            unlink(temporary)
            throw IdentityStoreError(.cannotWrite, path: path, "cannot move the new file into place: \(reason)")
        }
        unlink(temporary)
        let directory = open(url.deletingLastPathComponent().path, O_RDONLY | O_CLOEXEC)
        if directory >= 0 {
            _ = fsync(directory)
            close(directory)
        }
    }

    static func errnoText() -> String {
        String(cString: strerror(errno))
    }

    /// The system's text for the POSIX error behind a `FileHandle` failure (the same words `errnoText()` gives),
    /// or the error's own description when it carries no POSIX code.
    static func reason(_ error: any Error) -> String {
        let nsError = error as NSError
        if nsError.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(nsError.code)))
        }
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError,
            underlying.domain == NSPOSIXErrorDomain
        {
            return String(cString: strerror(Int32(underlying.code)))
        }
        return error.localizedDescription
    }
}
