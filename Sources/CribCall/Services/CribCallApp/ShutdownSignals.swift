import UnixSignals

/// Runs `action` on SIGINT and SIGTERM (swift-service-lifecycle's UnixSignals), for as long as this object lives.
final class ShutdownSignals: Sendable {
    private let task: Task<Void, Never>

    init(_ action: @escaping @Sendable () async -> Void) {
        task = Task {
            for await _ in await UnixSignalsSequence(trapping: .sigint, .sigterm) { await action() }
        }
    }

    deinit {
        task.cancel()
    }
}
