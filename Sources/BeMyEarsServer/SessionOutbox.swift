import BeMyEarsCore
import Synchronization

/// The outgoing side of one WebSocket session: frames the hub asked for, in order, until the connection's writer
/// task puts them on the socket.
///
/// Enqueueing never blocks (``SignalingOutbound`` is synchronous and must not stall the hub). The queue is bounded
/// by bytes instead: a client that does not read its socket would otherwise make the server buffer without bound
/// (BEMYEARS-PROTOCOL.md, Transport: over 1 MiB → disconnected). Past the limit the outbox stops accepting
/// frames and calls `onOverflow`, which drops the connection.
final class SessionOutbox: Sendable {
    /// One thing for the writer to do.
    enum Item: Sendable, Equatable {
        case text(String)
        /// Send a close frame with this code; nothing follows it.
        case close(CloseCode)
    }

    private struct State {
        /// Bytes enqueued and not yet taken by the socket.
        var pendingBytes = 0
        var isFinished = false
    }

    /// What the writer task iterates.
    let items: AsyncStream<Item>
    /// The largest backlog (bytes of text not yet written) before the connection is dropped.
    let limit: Int
    private let continuation: AsyncStream<Item>.Continuation
    private let state = Mutex(State())
    private let onOverflow: @Sendable () -> Void

    /// - Parameters:
    ///   - limit: Bytes of unwritten text allowed (1 MiB for the protocol).
    ///   - onOverflow: Called once, outside any lock, when the backlog exceeds `limit`.
    init(limit: Int, onOverflow: @escaping @Sendable () -> Void) {
        let (items, continuation) = AsyncStream.makeStream(of: Item.self, bufferingPolicy: .unbounded)
        self.items = items
        self.continuation = continuation
        self.limit = limit
        self.onOverflow = onOverflow
    }

    /// Queues a text frame. Returns false when the outbox no longer accepts frames (closed, finished, or the
    /// backlog just went over the limit).
    @discardableResult
    func enqueue(_ text: String) -> Bool {
        let size = text.utf8.count
        let outcome: Bool? = state.withLock { state in
            guard !state.isFinished else { return false }
            state.pendingBytes += size
            guard state.pendingBytes <= limit else {
                state.isFinished = true
                continuation.finish()
                return nil
            }
            // Yielded under the lock so that concurrent senders (the hub, a forwarded delivery) keep one order.
            continuation.yield(.text(text))
            return true
        }
        guard let outcome else {
            onOverflow()
            return false
        }
        return outcome
    }

    /// Queues a close frame after what is already queued; later frames are dropped.
    func close(_ code: CloseCode) {
        state.withLock { state in
            guard !state.isFinished else { return }
            state.isFinished = true
            continuation.yield(.close(code))
            continuation.finish()
        }
    }

    /// The writer put `bytes` of text on the socket.
    func didWrite(_ bytes: Int) {
        state.withLock { $0.pendingBytes -= bytes }
    }

    /// Stops accepting frames; the writer ends after what is queued.
    func finish() {
        state.withLock { state in
            state.isFinished = true
            continuation.finish()
        }
    }

    /// Bytes queued and not yet written.
    var pendingBytes: Int {
        state.withLock { $0.pendingBytes }
    }
}
