import CanonicalJSON
import ControlSocket
import Foundation
import ToukanCore
import ToukanStore

/// What a command found and mended on its way in (``ToukanCommands/repair()``).
struct Repair: Sendable {
    /// This command started the daemon (none was running and work was waiting for one).
    var startedDaemon = false
    /// Recordings the started daemon recovered or adopted: file names and seconds.
    var recovered: [(file: String, seconds: Double)] = []

    /// "Recovered toukan_….m4a (12s) after the recorder stopped unexpectedly." Nil when nothing was.
    var recoveredText: String? {
        guard !recovered.isEmpty else { return nil }
        let files = recovered.map { "\($0.file) (\(ElapsedTime.duration($0.seconds)))" }.joined(separator: ", ")
        return "Recovered \(files) after the recorder stopped unexpectedly."
    }

    var recoveredJSON: JSONValue {
        .array(recovered.map { ["file": .string($0.file), "durationSeconds": .number($0.seconds)] })
    }
}

extension ToukanCommands {
    /// Every command's way in. A daemon that died (`kill -9`, a power cut) leaves work only a daemon does: a partial
    /// recording to finalise, an upload cut off (its row still `uploading`), recordings waiting to upload. When no
    /// daemon answers and such work is there, this starts one, which does it first thing; the command then sees
    /// the state mended (the recording listed, the upload going again).
    func repair() async throws -> Repair {
        if await daemonAnswers() { return Repair() }
        guard try workForDaemon() else { return Repair() }
        try await ensureDaemon()
        var repair = Repair(startedDaemon: true)
        if let answer = try? await ControlSocketClient.ask(path: data.socket.path, DaemonRequest.status.json),
            let status = try? DaemonStatus(json: answer)
        {
            repair.recovered = (status.recoveredAtStart ?? []).map { ($0.file, $0.durationSeconds) }
        }
        return repair
    }

    /// Whether a daemon serves this data directory now.
    func daemonAnswers() async -> Bool {
        (try? await ControlSocketClient.ask(path: data.socket.path, DaemonRequest.status.json)) != nil
    }

    /// Whether a dead daemon left work: a partial recording, a saved one the ledger does not know, or rows pending
    /// or uploading.
    private func workForDaemon() throws -> Bool {
        if !data.partialFiles().isEmpty { return true }
        let saved = data.savedFiles()
        guard let ledger = try ledger() else { return !saved.isEmpty }
        let rows = try ledger.history()
        let known = Set(rows.map(\.recording.filePath))
        if saved.contains(where: { !known.contains(Uploads.relativePath($0)) }) { return true }
        return rows.contains { $0.recording.uploadStatus == .pending || $0.recording.uploadStatus == .uploading }
    }

    /// Opens the ledger, or nil when nothing was ever recorded here (nothing is created then).
    func ledger() throws -> ToukanDatabase? {
        guard FileManager.default.fileExists(atPath: data.url.appendingPathComponent(ToukanDatabase.fileName).path)
        else { return nil }
        return try ToukanDatabase(directory: data.url)
    }
}
