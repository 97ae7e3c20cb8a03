import Crypto
import Foundation
import HTTPTypes
import ToukanCore

/// A file being received into `incoming/`: written as it arrives, hashed (SHA-256), its first bytes sniffed
/// (ToukanCore's AudioSniffer: the 415), fsynced at the end. Removed unless ``finish()`` hands it over.
final class IncomingFile {
    let path: String
    private let handle: FileHandle
    private var hash = SHA256()
    private var prefix: [UInt8] = []
    private var sniffed = false
    private(set) var size: Int64 = 0
    private var closed = false

    init(path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
        else { throw HTTPRefusal(.internalServerError, "storage_unavailable", "The server cannot store uploads now.") }
        self.path = path
        handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    }

    deinit {
        if !closed {
            try? handle.close()
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    /// Appends bytes.
    /// - Throws: ``HTTPRefusal`` 415 as soon as the first bytes show the file is not M4A audio.
    func write(_ bytes: ArraySlice<UInt8>) throws {
        guard !bytes.isEmpty else { return }
        if !sniffed {
            prefix.append(contentsOf: bytes.prefix(AudioSniffer.bytesNeeded - prefix.count))
            if prefix.count >= AudioSniffer.bytesNeeded { try sniff() }
        }
        try handle.write(contentsOf: Data(bytes))
        hash.update(data: Data(bytes))
        size += Int64(bytes.count)
    }

    /// The file is complete: sniffed (a short file too), fsynced and closed.
    /// - Returns: Its SHA-256.
    func finish() throws -> [UInt8] {
        if !sniffed { try sniff() }
        try handle.synchronize()
        try handle.close()
        closed = true
        return Array(hash.finalize())
    }

    private func sniff() throws {
        sniffed = true
        if case .refused(let message) = AudioSniffer.sniff(prefix) {
            throw HTTPRefusal(.unsupportedMediaType, "unsupported_media_type", message)
        }
    }
}
