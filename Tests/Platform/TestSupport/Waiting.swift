/// A wait that did not end in time; says what it was waiting for.
public struct TimedOut: Error, CustomStringConvertible {
    public var description: String

    public init(description: String) {
        self.description = description
    }
}

/// An expected value that did not come.
public struct MissingValue: Error, CustomStringConvertible {
    public var description: String

    public init(description: String) {
        self.description = description
    }
}

/// Runs `body`, failing with ``TimedOut`` (naming `what`) after `timeout` instead of hanging the test run; the
/// body's task is cancelled.
public func withTimeout<T: Sendable>(
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

/// Waits until `condition` holds (polling every 20 ms), or fails with ``TimedOut`` naming `what`.
public func eventually(
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

/// Polls `value` every `poll` until it gives something (which is returned), or fails with ``TimedOut`` naming `what`.
public func awaitValue<T>(
    _ what: String,
    timeout: Duration = .seconds(20),
    poll: Duration = .milliseconds(100),
    _ value: () async throws -> T?
) async throws -> T {
    let deadline = ContinuousClock.now + timeout
    while true {
        if let found = try await value() { return found }
        guard ContinuousClock.now < deadline else { throw TimedOut(description: "\(what): not within \(timeout)") }
        try await Task.sleep(for: poll)
    }
}
