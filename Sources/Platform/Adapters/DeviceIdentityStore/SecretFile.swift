public import Foundation

/// A secret of any product kept in its data directory (a signing key, an admin token): created 0600 from its first
/// byte and never replaced, read only while no other user can read it.
public enum SecretFile {
    /// The secret at `url`, created with `make()` when there is none yet (the data directory is made 0700 first).
    /// Two processes starting at once end up with the same secret: the one that lost the race reads the winner's.
    /// - Throws: ``IdentityStoreError`` naming the file and what to do (e.g. `chmod 600` for a file others can read).
    public static func loadOrCreate(_ url: URL, make: () throws -> String) throws -> String {
        try PrivateFiles.ensurePrivateDirectory(url.deletingLastPathComponent())
        if PrivateFiles.exists(url) { return try PrivateFiles.readPrivate(url) }
        do {
            try PrivateFiles.writeNewPrivate(try make(), to: url)
        } catch let error as IdentityStoreError where PrivateFiles.exists(url) {
            _ = error  // another process wrote it first: theirs is the secret
        }
        return try PrivateFiles.readPrivate(url)
    }

    /// The secret at `url` (checked as ``loadOrCreate(_:make:)`` does), or nil when there is none.
    public static func load(_ url: URL) throws -> String? {
        PrivateFiles.exists(url) ? try PrivateFiles.readPrivate(url) : nil
    }
}
