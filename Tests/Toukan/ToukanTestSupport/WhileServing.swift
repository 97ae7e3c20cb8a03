/// Runs `serve` (a server's run loop) in the background while `body` runs, then cancels it.
/// - Returns: What `body` returned.
/// - Throws: What `body` threw, or what `serve` threw if it ended first.
func whileServing<T: Sendable>(
    _ serve: @escaping @Sendable () async throws -> Void, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask {
            try await serve()
            return nil
        }
        group.addTask { try await body() }
        while let result = try await group.next() {
            if let result {
                group.cancelAll()
                return result
            }
        }
        throw CancellationError()
    }
}
