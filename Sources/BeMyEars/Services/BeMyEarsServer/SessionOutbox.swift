import BeMyEarsCore
import Synchronization

/// The outgoing side of one WebSocket session: frames the hub asked for, in order, until the connection's writer
/// task puts them on the socket.
///
/// Enqueueing never blocks (``SignalingOutbound`` is synchronous and must not stall the hub). A client that does
/// not read its socket would otherwise make the server buffer without bound (BEMYEARS-PROTOCOL.md, Transport),
/// so the outbox gives up on it in two ways, whichever comes first:
/// - **Overflow**: more than `limit` bytes (1 MiB) wait to be written.
/// - **Stall**: the socket has taken nothing for a while although a frame waits (``dropIfStalled(now:after:)``,
///   checked every second by a sweep of ``WebSocketOutbound/dropStalled(now:after:)``). This bound does not depend on how fast the other party sends: a stalled
///   client is dropped a fixed time after its kernel buffers filled, before any call deadline can fire.
///
/// Either way the outbox stops accepting frames and calls `onDrop` once, which drops the connection.
final class SessionOutbox: Sendable {
    /// One thing for the writer to do.
    enum Item: Sendable, Equatable {
        case text(String)
        /// Send a close frame with this code; nothing follows it.
        case close(CloseCode)
    }

    /// Why the outbox gave up on its client.
    enum DropReason: String, Sendable, Equatable {
        /// More than the limit waited to be written.
        case outboundBufferFull = "OUTBOUND_BUFFER_FULL"
        /// A frame waited for the socket longer than the stall timeout.
        case writeStalled = "WRITE_STALLED"
    }

    private struct State {
        /// Bytes enqueued and not yet taken by the socket.
        var pendingBytes = 0
        var isFinished = false
        /// Since when the writer has been waiting for the socket to take a frame; nil while it is not.
        var writingSince: ContinuousClock.Instant?
    }

    /// What the writer task iterates.
    let items: AsyncStream<Item>
    /// The largest backlog (bytes of text not yet written) before the connection is dropped.
    let limit: Int
    private let continuation: AsyncStream<Item>.Continuation
    private let state = Mutex(State())
    private let onDrop: @Sendable (DropReason) -> Void

    /// - Parameters:
    ///   - limit: Bytes of unwritten text allowed (1 MiB for the protocol).
    ///   - onDrop: Called once, outside any lock, when the outbox gives up on its client.
    init(limit: Int, onDrop: @escaping @Sendable (DropReason) -> Void) {
        let (items, continuation) = AsyncStream.makeStream(of: Item.self, bufferingPolicy: .unbounded)
        self.items = items
        self.continuation = continuation
        self.limit = limit
        self.onDrop = onDrop
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
            onDrop(.outboundBufferFull)
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

    /// The writer starts handing a frame to the socket (it may wait there while the client does not read).
    func willWrite(at now: ContinuousClock.Instant) {
        state.withLock { $0.writingSince = now }
    }

    /// The writer put `bytes` of text on the socket.
    func didWrite(_ bytes: Int) {
        state.withLock { state in
            state.pendingBytes -= bytes
            state.writingSince = nil
        }
    }

    /// Gives up on the client when the writer has waited for its socket for `timeout` or longer at `now`.
    /// - Returns: Whether it did (then `onDrop(.writeStalled)` was called).
    @discardableResult
    func dropIfStalled(now: ContinuousClock.Instant, after timeout: Duration) -> Bool {
        let stalled = state.withLock { state in
            guard !state.isFinished, let since = state.writingSince, now - since >= timeout else { return false }
            state.isFinished = true
            continuation.finish()
            return true
        }
        if stalled { onDrop(.writeStalled) }
        return stalled
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
