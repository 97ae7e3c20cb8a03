import Foundation
import JobQueue
import Synchronization
import TestSupport
import Testing

/// Where a queue under test keeps its jobs.
enum Backend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// A fresh SQLite file; more handles open it again, as other processes would.
    case sqlite
    /// A database on a real PostgreSQL 15 (TestSupport's throwaway LocalPostgres), claims with `SKIP LOCKED`; each
    /// handle runs its own connection pool, as another server process would.
    case postgres

    var testDescription: String { rawValue }

    var contract: JobQueueContract {
        switch self {
        case .sqlite:
            JobQueueContract {
                let directory = try Subprocess.temporaryDirectory("job-queue")
                let path = directory.appendingPathComponent("jobs.sqlite").path
                return JobQueueContract.Fixture(
                    queue: try SQLiteJobQueue(path: path), shared: { try SQLiteJobQueue(path: path) },
                    close: { try? FileManager.default.removeItem(at: directory) })
            }
        case .postgres:
            JobQueueContract {
                let database = try await LocalPostgres.shared().createDatabase("jobs")
                let pools = Pools()
                let queue = try await Self.open(database.tcpURL, pools: pools)
                return JobQueueContract.Fixture(
                    queue: queue, shared: { try await Self.open(database.tcpURL, pools: pools) },
                    close: { pools.stop() })
            }
        }
    }

    /// The connection pools of one test's handles, stopped at its end.
    final class Pools: Sendable {
        private let tasks = Mutex<[Task<Void, Never>]>([])

        func add(_ task: Task<Void, Never>) { tasks.withLock { $0.append(task) } }

        func stop() {
            tasks.withLock { tasks in
                for task in tasks { task.cancel() }
            }
        }
    }

    /// Each handle runs its own connection pool, as a separate server process would.
    static func open(_ url: String, pools: Pools) async throws -> PostgresJobQueue {
        let queue = try PostgresJobQueue(url: url)
        pools.add(Task { await queue.run() })
        try await queue.migrate()
        return queue
    }

}

@Suite("JobQueue contract, on SQLite and PostgreSQL")
struct JobQueueContractTests {
    @Test("a claimed job is held by one worker until it completes", arguments: Backend.allCases)
    func claim(_ backend: Backend) async throws { try await backend.contract.claimAndComplete() }

    @Test("jobs run when due, oldest first, only of the kinds a worker asks for", arguments: Backend.allCases)
    func order(_ backend: Backend) async throws { try await backend.contract.dueTimesKindsAndOrder() }

    @Test("a key makes a repeated enqueue return the first job", arguments: Backend.allCases)
    func keys(_ backend: Backend) async throws { try await backend.contract.keysDeduplicate() }

    @Test(
        "a dead worker's lease lapses, another takes the job, the late result is dropped", arguments: Backend.allCases)
    func leases(_ backend: Backend) async throws { try await backend.contract.lapsedLeases() }

    @Test("failures retry by the policy, then fail for good until a person retries", arguments: Backend.allCases)
    func failures(_ backend: Backend) async throws { try await backend.contract.failuresAndRetries() }

    @Test("kind, key and payload are bounded", arguments: Backend.allCases)
    func bounds(_ backend: Backend) async throws { try await backend.contract.bounds() }

    @Test("six workers on their own connections run each of 120 jobs exactly once", arguments: Backend.allCases)
    func concurrent(_ backend: Backend) async throws { try await backend.contract.concurrentWorkersClaimEachJobOnce() }
}
