import Foundation
import JobQueue
import TestSupport
import Testing

@Suite("SQLite job queue and retry policy")
struct SQLiteJobQueueTests {
    @Test("the database file is owner-only")
    func permissions() throws {
        let directory = try Subprocess.temporaryDirectory("job-queue")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("jobs.sqlite").path
        _ = try SQLiteJobQueue(path: path)
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600)
        let refused = #expect(throws: JobQueueError.self) { try SQLiteJobQueue(path: "/nonexistent-dir/jobs.sqlite") }
        #expect(refused?.code == .unavailable)
    }

    @Test(
        "backoff doubles from the base up to the cap, and stops after the last attempt",
        arguments: [(1, 5.0), (2, 10.0), (3, 20.0), (4, 40.0), (5, nil)] as [(Int, Double?)])
    func backoff(attempt: Int, delay: Double?) {
        let policy = RetryPolicy(maxAttempts: 5, base: .seconds(5), cap: .seconds(30))
        let now = Date(timeIntervalSince1970: 0)
        let expected = delay.map { now.addingTimeInterval(min($0, 30)) }
        #expect(policy.retryTime(afterAttempt: attempt, now: now) == expected)
    }

    @Test("an unusable PostgreSQL URL is refused with what to fix")
    func badURL() {
        let refused = #expect(throws: JobQueueError.self) { try PostgresJobQueue(url: "mysql://h/db") }
        #expect(refused?.code == .invalidArgument && refused?.message.contains("postgres://") == true)
    }
}
