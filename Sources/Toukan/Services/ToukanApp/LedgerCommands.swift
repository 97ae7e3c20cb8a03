import CanonicalJSON
import ControlSocket
import Foundation
import ToukanCore
import ToukanStore

/// `toukan history|retry|cleanup`: the ledger, read and changed directly (SQLite in WAL mode, so this works while
/// the daemon writes); the daemon is told to look again when it runs, and started when work waits for it.
extension ToukanCommands {
    /// `toukan history`: newest first, with status (and why a recording waits) and live upload progress. Returns
    /// the lines to print.
    public func history() async throws -> [String] {
        let repair = try await repair()
        let entries = try ledger()?.history() ?? []
        let summary = UploadSummary(entries: entries, server: data.uploadServer, now: Date())
        if json { return entries.map { Self.json($0, status: summary.status(of: $0)).canonicalString } }
        guard !entries.isEmpty else { return ["No recordings yet. Start one with `toukan start`."] }
        let format = Date.FormatStyle(date: .abbreviated, time: .shortened)
        let lines = entries.map { entry in
            let recording = entry.recording
            var line =
                "\(String(recording.id.uuidString.prefix(8)).lowercased())  \(recording.recordedAt.formatted(format))"
            line += "  \(ElapsedTime.duration(recording.duration))  \(summary.status(of: entry))"
            if !recording.gaps.isEmpty { line += "  (\(recording.gaps.map(\.description).joined(separator: "; ")))" }
            if recording.recoveredAfterCrash { line += "  (recovered after a crash)" }
            if recording.fileDeletedAt != nil { line += "  [local file cleaned up]" }
            return line
        }
        return [repair.recoveredText].compactMap { $0 } + lines
    }

    /// `toukan retry [ID|--all]`: failed recordings go back in the queue (`--all` also hurries waiting ones).
    public func retry(_ id: String?, all: Bool) async throws -> String {
        _ = try await repair()
        guard let database = try ledger() else { throw ToukanFailure("nothing to retry: no recordings yet") }
        let count: Int
        if all {
            count = try database.retryAll().count
        } else {
            guard let id else { throw ToukanFailure("give a recording's id (see `toukan history`) or --all") }
            let matches = try database.history().filter {
                $0.recording.id.uuidString.lowercased().hasPrefix(id.lowercased())
            }
            guard matches.count == 1, let match = matches.first else {
                throw ToukanFailure(
                    matches.isEmpty
                        ? "no recording has id \(id); see `toukan history`" : "\(id) matches several recordings")
            }
            do {
                _ = try database.retry(id: match.recording.id)
            } catch {
                throw ToukanFailure("\(error)")
            }
            count = 1
        }
        if count > 0 { try await ensureDaemon() }
        _ = try? await ControlSocketClient.ask(path: data.socket.path, DaemonRequest.wake.json)
        let uploading = try database.history().filter { $0.recording.uploadStatus == .uploading }.count
        let server = data.uploadServer
        if json {
            return JSONValue.object([
                "ok": true, "queued": .number(Double(count)), "uploading": .number(Double(uploading)),
                "server": server.map { .string($0.absoluteString) } ?? .null,
            ]).canonicalString
        }
        var text = "\(count) recording\(count == 1 ? "" : "s") queued for upload again."
        if count == 0 && uploading > 0 { text += " \(uploading) uploading now." }
        if server == nil { text += " They wait here: " + UploadSummary.setServer + "." }
        return text
    }

    /// `toukan cleanup`: deletes local files 7 days after their confirmed upload, never before, never un-uploaded.
    public func cleanup() throws -> String {
        guard let database = try ledger() else { return json ? #"{"deleted":0}"# : "Nothing to clean up." }
        var deleted = 0
        var freed: Int64 = 0
        for recording in try database.filesToDelete(at: Date()) {
            let file = data.url.appendingPathComponent(recording.filePath)
            let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?.int64Value
            try? FileManager.default.removeItem(at: file)
            _ = try database.markFileDeleted(id: recording.id, at: Date())
            deleted += 1
            freed += size ?? 0
        }
        if json { return JSONValue.object(["deleted": .number(Double(deleted))]).canonicalString }
        return deleted == 0
            ? "Nothing to clean up: files are kept until 7 days after their upload is confirmed."
            : "Deleted \(deleted) uploaded recording\(deleted == 1 ? "" : "s") (\(StoragePolicy.megabytes(freed)))."
    }

    static func json(_ entry: HistoryEntry, status: String) -> JSONValue {
        let recording = entry.recording
        var object: [String: JSONValue] = [
            "id": .string(recording.id.uuidString.lowercased()), "file": .string(recording.filePath),
            "recordedAt": .string(recording.recordedAt.formatted(.iso8601)),
            "durationSeconds": .number(recording.duration), "uploadStatus": .string(recording.uploadStatus.rawValue),
            "retryCount": .number(Double(recording.retryCount)),
            "gaps": .array(recording.gaps.map { .string($0.description) }),
        ]
        if let memory = recording.memoryId { object["memoryId"] = .string(memory) }
        if let error = recording.lastError { object["lastError"] = .string(error) }
        if let progress = entry.progress {
            object["progress"] = ["sent": .number(Double(progress.sent)), "total": .number(Double(progress.total))]
        }
        object["status"] = .string(status)
        object["offlineAttempts"] = .number(Double(recording.offlineAttempts))
        if let since = recording.offlineSince { object["unreachableSince"] = .string(since.formatted(.iso8601)) }
        if recording.recoveredAfterCrash { object["recoveredAfterCrash"] = true }
        return .object(object)
    }
}
