import Foundation

struct TimedOut: Error, CustomStringConvertible {
    var description: String
}

/// Runs `body`, failing after `timeout` instead of hanging the test run.
func withTimeout<T: Sendable>(
    _ timeout: Duration,
    _ what: String,
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: timeout)
            throw TimedOut(description: "\(what) took longer than \(timeout)")
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}

/// Waits until `condition` holds (polling), or fails.
func eventually(
    _ what: String,
    timeout: Duration = .seconds(20),
    _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while try await !condition() {
        guard ContinuousClock.now < deadline else { throw TimedOut(description: "\(what): not within \(timeout)") }
        try await Task.sleep(for: .milliseconds(20))
    }
}

/// An expected value that did not come.
struct MissingValue: Error, CustomStringConvertible {
    var description: String
}
