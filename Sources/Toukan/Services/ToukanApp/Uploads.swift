import Foundation
import Logging
import NetworkWatch
import ToukanCore
import ToukanRecorder
import ToukanStore
import ToukanUploader
import ToukanUploads

/// The daemon's upload side: every saved recording goes into the ledger first, then the upload loop sends it to
/// the server (`--server URL`, remembered in the data directory, or `TOUKAN_SERVER`) when the network allows.
actor Uploads {
    let database: ToukanDatabase
    private let data: ToukanDataDirectory
    private let log = Logger(label: "toukan daemon")
    private var running: (loop: UploadLoop, task: Task<Void, Never>, uploader: ToukanUploader, server: URL)?

    init(data: ToukanDataDirectory) throws {
        self.data = data
        database = try ToukanDatabase(directory: data.url)
    }

    /// The server uploads go to: the remembered one, else `TOUKAN_SERVER`.
    var server: URL? { data.uploadServer }

    /// Remembers `url` as the server and (re)starts the upload loop for it.
    func use(server url: URL) async throws {
        try Data((url.absoluteString + "\n").utf8).write(to: data.serverFile, options: .atomic)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: data.serverFile.path)
        await start()
    }

    /// Starts the loop for the configured server (no server: recordings wait in the ledger, nothing is lost).
    func start() async {
        guard let server else {
            log.info("no upload server yet: recordings wait; set one with `toukan start --server URL`")
            return
        }
        if let running, running.server == server { return }
        await stop()
        let network: any NetworkStatus
        do {
            network = try NetworkWatch()
        } catch {
            log.warning("no network watch (\(error)); uploads are retried on their schedule only")
            network = AlwaysOnline()
        }
        let uploader = ToukanUploader(configuration: .init(server: server))
        let loop = UploadLoop(database: database, dataDirectory: data.url, uploader: uploader, network: network)
        let task = Task {
            do {
                try await loop.run()
            } catch {
                Logger(label: "toukan daemon").error("the upload loop stopped: \(error)")
            }
        }
        running = (loop, task, uploader, server)
        log.info("uploading to \(server.absoluteString)")
        // Answer commands once the queue moves: a recording due now reads `uploading` from then on.
        await loop.firstDecision()
    }

    func stop() async {
        guard let running else { return }
        self.running = nil
        running.task.cancel()
        _ = await running.task.value
        try? await running.uploader.shutdown()
    }

    /// Puts a saved recording in the ledger (pending) and wakes the loop.
    func add(_ saved: SavedRecording, randomBytes: [UInt8]) throws {
        let relative = Self.relativePath(saved.file)
        guard try !database.history().contains(where: { $0.recording.filePath == relative }) else { return }
        let startedAt = RecordingName(fileName: saved.file.lastPathComponent)?.startedAt ?? Date()
        try database.add(
            Recording(
                id: UUID(), filePath: relative, recordedAt: startedAt, duration: saved.duration,
                idempotencyKey: IdempotencyKey(randomBytes: randomBytes), gaps: saved.gaps,
                recoveredAfterCrash: saved.recovered))
        running?.loop.wake()
    }

    /// Recordings on disk the ledger does not know (a daemon died between saving a file and writing its row, or
    /// a file was put there by hand), each with the duration read from it.
    /// - Returns: What was added.
    @discardableResult
    func adopt(_ files: [URL]) async throws -> [SavedRecording] {
        let known = Set(try database.history().map(\.recording.filePath))
        var adopted: [SavedRecording] = []
        for file in files where !known.contains(Self.relativePath(file)) {
            let seconds: Double
            do {
                seconds = try await ToukanRecorder.measure(file).seconds
            } catch {
                // Kept and queued all the same: the server says whether it can be decoded.
                log.warning("\(file.lastPathComponent): its length cannot be read (\(error.message))")
                seconds = 0
            }
            let saved = SavedRecording(file: file, duration: seconds, gaps: [], recovered: true)
            try add(saved, randomBytes: DaemonRun.randomKeyBytes())
            adopted.append(saved)
        }
        return adopted
    }

    /// A recording's `filePath` in the ledger: relative to the data directory.
    static func relativePath(_ file: URL) -> String {
        "recordings/" + file.lastPathComponent
    }

    func wake() {
        running?.loop.wake()
    }
}

/// A network that is always there: the loop's schedule alone decides.
struct AlwaysOnline: NetworkStatus {
    func isOnline() -> Bool { true }
    var changes: AsyncStream<NetworkChange> { AsyncStream { _ in } }
}
