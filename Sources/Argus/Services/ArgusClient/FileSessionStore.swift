public import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The session in one file (`session.json`, 0600, in a 0700 directory), replaced atomically: written to a new
/// file created 0600 (never following a link), flushed, then renamed over the old one, so a crash never leaves half
/// a token and no other user ever can read it.
public struct FileSessionStore: SessionStore {
    public let file: URL

    public init(directory: URL) {
        file = directory.appendingPathComponent("session.json")
    }

    public func load() throws -> StoredSession? {
        guard FileManager.default.fileExists(atPath: file.path) else { return nil }
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        if let mode = attributes[.posixPermissions] as? Int, mode & 0o077 != 0 {
            throw ArgusClientError.unreachable(
                "\(file.path) holds tokens but others can read it (mode \(String(mode, radix: 8))): chmod 600 it, "
                    + "and pair again if others had access")
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return try decoder.decode(StoredSession.self, from: Data(contentsOf: file))
    }

    public func save(_ session: StoredSession) throws {
        let directory = file.deletingLastPathComponent()
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        let data = try encoder.encode(session)
        let temporary = file.path + ".new-\(getpid())"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: temporary])
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        do {
            try handle.write(contentsOf: data)
            try handle.synchronize()
            try handle.close()
        } catch {
            unlink(temporary)
            throw error
        }
        guard rename(temporary, file.path) == 0 else {
            unlink(temporary)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: file.path])
        }
    }

    public func clear() throws {
        if FileManager.default.fileExists(atPath: file.path) { try FileManager.default.removeItem(at: file) }
    }
}
