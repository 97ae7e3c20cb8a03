import Synchronization

/// Hands every ``DesktopNotification/Invocation`` to every stream made by ``stream()`` (the presenters'
/// ``NotificationPresenter/actionInvocations()``).
///
/// Bounded: each stream keeps the newest ``bufferLimit`` invocations its reader has not taken yet, and at most
/// ``maximumStreams`` streams are open at once (a further one ends at once, so a caller that leaks streams cannot
/// make this grow). A stream ends when its reader stops iterating or when ``finish()`` is called.
final class InvocationBroadcaster: Sendable {
    /// How many unread invocations each stream keeps (the newest).
    static let bufferLimit = 16
    /// How many streams may be open at once.
    static let maximumStreams = 64

    private typealias Continuation = AsyncStream<DesktopNotification.Invocation>.Continuation

    private struct State {
        var continuations: [Int: Continuation] = [:]
        var nextID = 0
        var finished = false
    }

    private let state = Mutex(State())

    /// A new stream that gets every invocation yielded from now on.
    func stream() -> AsyncStream<DesktopNotification.Invocation> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: DesktopNotification.Invocation.self, bufferingPolicy: .bufferingNewest(Self.bufferLimit))
        let id: Int? = state.withLock { state in
            guard !state.finished, state.continuations.count < Self.maximumStreams else { return nil }
            defer { state.nextID += 1 }
            state.continuations[state.nextID] = continuation
            return state.nextID
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            self?.remove(id)
        }
        return stream
    }

    /// Gives `invocation` to every open stream.
    func yield(_ invocation: DesktopNotification.Invocation) {
        let continuations = state.withLock { Array($0.continuations) }
        for (id, continuation) in continuations {
            if case .terminated = continuation.yield(invocation) { remove(id) }
        }
    }

    /// Ends every stream; later streams end at once.
    func finish() {
        let continuations = state.withLock { state in
            state.finished = true
            defer { state.continuations.removeAll() }
            return Array(state.continuations.values)
        }
        for continuation in continuations { continuation.finish() }
    }

    private func remove(_ id: Int) {
        _ = state.withLock { $0.continuations.removeValue(forKey: id) }
    }
}
