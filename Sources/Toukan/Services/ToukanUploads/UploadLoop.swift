public import Foundation
public import Logging
import Synchronization
public import ToukanCore
public import ToukanStore
public import ToukanUploader

/// The upload queue running: ToukanCore's `UploadQueue` decides from the ledger, the network and the clock; this
/// loop does what it says — upload the due recording (one at a time), sleep until the next one is due, or wait for
/// the network — and writes each outcome back to the ledger through the transitions (uploaded with its memory id,
/// a retry scheduled by the backoff, or failed with the server's message).
///
/// It wakes on a network change (the link returning starts queued uploads at once), on ``wake()`` (a recording
/// saved, a retry asked for), when the next recording is due, and every ``recheckInterval`` (another process's
/// writes to the ledger, e.g. `toukan retry`).
public final class UploadLoop: Sendable {
    public let database: ToukanDatabase
    /// Recordings' `filePath`s are relative to it.
    public let dataDirectory: URL
    public let uploader: any RecordingUploading
    public let network: any NetworkStatus
    public let queue: UploadQueue
    /// How long a local file is kept after its upload is confirmed.
    public let retention: TimeInterval
    public let recheckInterval: Duration
    private let now: @Sendable () -> Date
    private let logger: Logger
    private let wakeUps: AsyncStream<Void>
    private let wakeUpContinuation: AsyncStream<Void>.Continuation
    /// Whether the loop has made its first decision, and who waits for it (``firstDecision()``).
    private let decided = Mutex<(done: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    public init(
        database: ToukanDatabase, dataDirectory: URL, uploader: any RecordingUploading, network: any NetworkStatus,
        queue: UploadQueue = UploadQueue(), retention: TimeInterval = CleanupPolicy.defaultRetention,
        recheckInterval: Duration = .seconds(5), now: @escaping @Sendable () -> Date = { Date() },
        logger: Logger = Logger(label: "toukan.uploads")
    ) {
        self.database = database
        self.dataDirectory = dataDirectory
        self.uploader = uploader
        self.network = network
        self.queue = queue
        self.retention = retention
        self.recheckInterval = recheckInterval
        self.now = now
        self.logger = logger
        (wakeUps, wakeUpContinuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Look at the ledger again now (a recording was saved, a retry asked for).
    public func wake() {
        wakeUpContinuation.yield()
    }

    /// Returns once the running loop has made its first decision: the upload due now has begun (its row reads
    /// `uploading`), or nothing is due. What a daemon waits for before it answers, so a command sees the queue
    /// moving.
    public func firstDecision() async {
        await withCheckedContinuation { continuation in
            let done = decided.withLock { state in
                if !state.done { state.waiting.append(continuation) }
                return state.done
            }
            if done { continuation.resume() }
        }
    }

    private func markDecided() {
        let waiting = decided.withLock { state in
            state.done = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Runs until the task is cancelled (or ``wake()``'s stream ends). First puts back uploads a killed daemon left
    /// `uploading` (they resume from their offset). Call it once.
    public func run() async throws {
        defer { markDecided() }
        let recovered = try database.recoverInterruptedUploads()
        if !recovered.isEmpty { logger.info("resuming \(recovered.count) interrupted upload(s)") }
        try await withThrowingTaskGroup(of: Void.self) { group in
            // Only the decisions end the loop: a network watch that stops leaves the periodic recheck.
            group.addTask { [network, wakeUpContinuation] in
                for await _ in network.changes { wakeUpContinuation.yield() }
            }
            try await self.decide()
            group.cancelAll()
        }
    }

    private func decide() async throws {
        var wakeUps = self.wakeUps.makeAsyncIterator()
        var wasOnline = network.isOnline()
        var onlineSince = now()
        while !Task.isCancelled {
            let online = network.isOnline()
            if online && !wasOnline {
                onlineSince = now()
                logger.info("the network is back: queued uploads start now")
            }
            wasOnline = online
            let rows: [Recording]
            do {
                rows = try database.queueRows()
            } catch {
                // The ledger is busy or unreadable for a moment: look again after the recheck interval.
                logger.error("cannot read the ledger: \(error)")
                rows = []
            }
            let action = queue.nextAction(
                rows: rows, connectivity: online ? .online(since: onlineSince) : .offline, now: now())
            let pause: Duration
            if case .upload = action {} else { markDecided() }
            switch action {
            case .upload(let id):
                await attempt(id)
                continue
            case .wait(let until, _):
                let seconds = max(0, until.timeIntervalSince(now()))
                pause = min(.milliseconds(Int64((seconds * 1000).rounded(.up))), recheckInterval)
            case .busy, .waitForNetwork, .idle:
                pause = recheckInterval
            }
            // Whichever comes first: the pause ends, or something wakes the loop.
            let timer = Task { [wakeUpContinuation] in
                try await Task.sleep(for: pause)
                wakeUpContinuation.yield()
            }
            let woken = await wakeUps.next()
            timer.cancel()
            if woken == nil { return }
        }
    }

    /// One upload attempt of `id`, its outcome written to the ledger.
    /// - Returns: The row afterwards (nil if the attempt could not start: another process moved it).
    @discardableResult
    public func attempt(_ id: UUID) async -> Recording? {
        let recording: Recording
        do {
            defer { markDecided() }
            recording = try database.beginUpload(id: id, at: now())
        } catch {
            logger.warning("cannot start uploading \(id): \(error)")
            return nil
        }
        let file =
            recording.filePath.hasPrefix("/")
            ? URL(fileURLWithPath: recording.filePath) : dataDirectory.appendingPathComponent(recording.filePath)
        logger.info("uploading \(recording.filePath)")
        let progress = ProgressWriter(database: database, id: id, logger: logger, now: now)
        let outcome = await uploader.upload(recording, file: file) { event in progress.report(event) }
        do {
            if Task.isCancelled {
                // Shutting down mid-upload is not a failed attempt: resume from the server's offset next time.
                return try database.update(id: id) { try $0.recoverInterruptedUpload() }.0
            }
            switch outcome {
            case .uploaded(let memoryId):
                let row = try database.completeUpload(id: id, memoryId: memoryId, at: now(), retention: retention)
                logger.info("uploaded \(recording.filePath): memory \(memoryId)")
                return row
            case .failed(let failure):
                let row = try database.failAttempt(id: id, failure, at: now(), policy: queue.retryPolicy)
                logger.warning(
                    "upload of \(recording.filePath) failed (\(row.uploadStatus == .failed ? "gave up" : "will retry")): \(failure)"
                )
                return row
            }
        } catch {
            logger.error("cannot record the outcome of uploading \(recording.filePath): \(error)")
            return nil
        }
    }
}

/// Writes an attempt's progress to the ledger: every tus offset the server confirms (so a cut resumes there), and
/// the bytes sent at most four times a second (for `toukan history`).
private final class ProgressWriter: Sendable {
    let database: ToukanDatabase
    let id: UUID
    let now: @Sendable () -> Date
    private let logger: Logger
    private let lastWrite = Mutex<Date>(.distantPast)
    /// A write failed and none has worked since: said once, not four times a second.
    private let failing = Mutex(false)

    init(database: ToukanDatabase, id: UUID, logger: Logger, now: @escaping @Sendable () -> Date) {
        self.database = database
        self.id = id
        self.logger = logger
        self.now = now
    }

    /// A progress write; a failure costs only a resume from an earlier offset (the server's own is asked first).
    private func write(_ body: () throws -> Void) {
        do {
            try body()
            failing.withLock { $0 = false }
        } catch {
            let first = failing.withLock { failing in
                defer { failing = true }
                return !failing
            }
            guard first else { return }
            logger.warning("cannot save an upload's progress (it resumes from the server's offset): \(error)")
        }
    }

    func report(_ event: UploadEvent) {
        switch event {
        case .stored(let offset, let location):
            write { _ = try database.recordProgress(id: id, offset: offset, location: location) }
        case .progress(let sent, let total):
            let time = now()
            let due = lastWrite.withLock { last in
                guard sent == total || time.timeIntervalSince(last) >= 0.25 else { return false }
                last = time
                return true
            }
            if due { write { try database.setUploadProgress(id: id, UploadProgress(sent: sent, total: total)) } }
        }
    }
}
