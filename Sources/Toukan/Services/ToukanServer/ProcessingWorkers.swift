import AudioAnalysis
import Foundation
import JobQueue
import Logging
import ServiceLifecycle
import ToukanMemoryStore

/// The processing workers of one server process: each claims a `process-memory` job from the shared
/// ``JobQueue`` (SQLite, or PostgreSQL with `FOR UPDATE SKIP LOCKED` for several processes), decodes the audio,
/// measures duration and loudness, transcribes it, and writes the memory `ready` (or `failed` with the reason).
/// A file that cannot be decoded fails for good; a store or queue error is retried by the ``RetryPolicy``.
struct ProcessingWorkers: Service {
    let intake: MemoryIntake
    let count: Int
    let node: String
    let transcribe: Bool
    let wakeUps: AsyncStream<Void>
    /// Longest wait between two looks at the queue when nothing wakes a worker (jobs of other processes).
    var pollInterval: Duration = .milliseconds(500)
    var lease: Duration = .seconds(600)
    var retry = RetryPolicy(maxAttempts: 5, base: .seconds(5), cap: .seconds(300))

    func run() async throws {
        guard count > 0 else {
            // A service that returns ends the whole group: a receive-only process waits for shutdown instead.
            try? await gracefulShutdown()
            return
        }
        let wakeUps = wakeUps
        let signal = WakeSignal()
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await _ in wakeUps { await signal.fire() }
                }
                for index in 0..<count {
                    group.addTask { await work(name: "\(node)-\(index)", signal: signal) }
                }
                await group.next()
                group.cancelAll()
            }
        } onGracefulShutdown: {
            Task { await signal.stop() }
        }
    }

    private func work(name: String, signal: WakeSignal) async {
        while !Task.isCancelled, await !signal.stopped {
            do {
                if let job = try await intake.queue.claim(
                    kinds: [MemoryIntake.jobKind], worker: name, lease: lease, now: Date())
                {
                    await process(job, worker: name)
                    continue
                }
            } catch {
                intake.logger.error("event=queue_unavailable worker=\(name) reason=\"\(error)\"")
            }
            await signal.wait(upTo: pollInterval)
        }
    }

    private func process(_ job: Job, worker: String) async {
        let logger = intake.logger
        let memoryId = job.payload
        do {
            guard let memory = try await intake.store.memory(id: memoryId) else {
                try await intake.queue.fail(
                    job.id, worker: worker, error: "no memory \(memoryId)", retryAt: nil, now: Date())
                return
            }
            logger.info("event=processing_started memory=\(memoryId) worker=\(worker)")
            let outcome: Result<AudioAnalysis, AudioAnalysisError>
            do {
                outcome = .success(
                    try await withLeaseRenewed(job, worker: worker) {
                        try await AudioAnalyzer.analyze(
                            path: intake.directory.absolute(memory.path), transcribe: transcribe)
                    })
            } catch let error as AudioAnalysisError {
                outcome = .failure(error)
            }
            switch outcome {
            case .success(let analysis):
                try await intake.store.finishProcessing(
                    id: memoryId, status: .ready, duration: analysis.duration,
                    loudness: analysis.loudness.isFinite ? analysis.loudness : nil, transcript: analysis.transcript,
                    error: nil, now: Date())
                logger.info(
                    "event=processing_done memory=\(memoryId) duration=\(analysis.duration) loudness=\(analysis.loudness)"
                )
            case .failure(let error):
                try await intake.store.finishProcessing(
                    id: memoryId, status: .failed, duration: nil, loudness: nil, transcript: nil,
                    error: error.message, now: Date())
                logger.warning("event=processing_failed memory=\(memoryId) reason=\"\(error.message)\"")
            }
            try await intake.queue.complete(job.id, worker: worker, now: Date())
        } catch {
            logger.error("event=processing_error memory=\(memoryId) reason=\"\(error)\"")
            do {
                try await intake.queue.fail(job, worker: worker, error: "\(error)", policy: retry, now: Date())
            } catch {
                // The job's lease runs out and another worker takes it again: nothing is lost, only a retry delayed.
                logger.error("event=processing_not_requeued memory=\(memoryId) reason=\"\(error)\"")
            }
        }
    }

    /// Runs `body` while renewing the job's lease every third of it.
    private func withLeaseRenewed<T: Sendable>(
        _ job: Job, worker: String, _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                while true {
                    try await Task.sleep(for: lease / 3)
                    try await intake.queue.renew(job.id, worker: worker, lease: lease, now: Date())
                }
            }
            defer { group.cancelAll() }
            while let result = try await group.next() {
                if let result { return result }
            }
            throw CancellationError()
        }
    }
}

/// Wakes idle workers when this process adds a job; otherwise they look again after a poll interval.
actor WakeSignal {
    private var waiters: [CheckedContinuation<Void, Never>] = []
    private var pending = false
    private(set) var stopped = false

    func fire() {
        if waiters.isEmpty {
            pending = true
        } else {
            for waiter in waiters { waiter.resume() }
            waiters = []
        }
    }

    func stop() {
        stopped = true
        fire()
    }

    /// Returns when fired, stopped, or after `duration`.
    func wait(upTo duration: Duration) async {
        if pending || stopped {
            pending = false
            return
        }
        let timer = Task { [weak self] in
            try? await Task.sleep(for: duration)
            await self?.fire()
        }
        await withCheckedContinuation { waiters.append($0) }
        timer.cancel()
    }
}
