import Foundation

/// The server's files: `memories.sqlite`, `jobs.sqlite` (without --database), `audio/<memory>.m4a`, `incoming/`
/// (uploads being received; a file here is never a memory) and `tus/<upload>` (tus uploads in progress).
struct ServerFiles: Sendable {
    let root: String

    var audio: String { (root as NSString).appendingPathComponent("audio") }
    var incoming: String { (root as NSString).appendingPathComponent("incoming") }
    var tus: String { (root as NSString).appendingPathComponent("tus") }
    var memoryDatabase: String { (root as NSString).appendingPathComponent("memories.sqlite") }
    var jobDatabase: String { (root as NSString).appendingPathComponent("jobs.sqlite") }

    /// Creates the directories (0700).
    func prepare() throws {
        for directory in [root, audio, incoming, tus] {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
    }

    /// A memory's audio, relative to the root (as stored) and absolute.
    func audioPath(memoryId: String) -> (relative: String, absolute: String) {
        let relative = "audio/\(memoryId).m4a"
        return (relative, (root as NSString).appendingPathComponent(relative))
    }

    func absolute(_ relative: String) -> String { (root as NSString).appendingPathComponent(relative) }

    func tusPath(uploadId: String) -> String { (tus as NSString).appendingPathComponent(uploadId) }

    /// A fresh file name in `incoming/`.
    func newIncomingPath() -> String {
        (incoming as NSString).appendingPathComponent("\(UUID().uuidString.lowercased()).part")
    }

    /// Removes files left in `incoming/` by a process that died mid-upload (older than an hour, so a second
    /// process sharing the directory keeps its uploads in flight).
    func removeStaleIncoming(now: Date) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: incoming) else { return }
        for name in names {
            let path = (incoming as NSString).appendingPathComponent(name)
            let modified = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
            if let modified, now.timeIntervalSince(modified) > 3_600 {
                try? FileManager.default.removeItem(atPath: path)
            }
        }
    }
}
