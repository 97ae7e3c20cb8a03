import BeMyEarsCore
import NIOCore

/// The outgoing side of one WebSocket as a pure state machine: frames the hub asked for, in order, until the
/// socket's event loop hands them to the kernel in batches (one flush per batch).
///
/// Enqueueing never blocks (``SignalingOutbound`` is synchronous and must not stall the hub). A client that does
/// not read its socket would otherwise make the server buffer without bound (BEMYEARS-PROTOCOL.md, Transport), so
/// the queue gives up on it in two ways, whichever comes first:
/// - **Overflow**: more than `limit` bytes (1 MiB) wait to be taken by the kernel (queued here or handed to the
///   channel and not yet written).
/// - **Stall**: the kernel has taken nothing for a while although a frame waits (``isStalled(now:after:)``, checked
///   every second by the server's sweep). This bound does not depend on how fast the other party sends: a stalled
///   client is dropped a fixed time after its kernel buffers filled, before any call deadline can fire.
///
/// Either way the queue stops accepting frames and the connection is dropped.
struct OutboundQueue {
    /// One thing for the socket to write.
    enum Item {
        /// A whole WebSocket frame, header included (``WebSocketFrames``); the same bytes may go to many sockets.
        case frame(ByteBuffer)
        /// Send a close frame with this code; nothing follows it.
        case close(CloseCode)
    }

    /// What became of a frame handed to ``enqueue(_:)``.
    enum Outcome: Equatable {
        /// Queued; `schedule` is true when the socket's event loop must be asked to write (no batch is pending).
        case queued(schedule: Bool)
        /// Not taken: the queue is closed or finished.
        case refused
        /// Not taken, and the client is to be dropped: the backlog went over the limit (reported once).
        case overflow
    }

    /// Why the server gave up on a client.
    enum DropReason: String, Sendable, Equatable {
        /// More than the limit waited to be written.
        case outboundBufferFull = "OUTBOUND_BUFFER_FULL"
        /// A frame waited for the socket longer than the stall timeout.
        case writeStalled = "WRITE_STALLED"
    }

    /// The largest backlog in bytes before the client is dropped.
    let limit: Int
    /// Items not yet taken by the event loop.
    private(set) var waiting: [Item] = []
    /// Bytes enqueued and not yet taken by the kernel (waiting here, or in the channel's buffer).
    private(set) var pendingBytes = 0
    /// Bytes handed to the channel and not yet reported written.
    private var handedBytes = 0
    /// Since when bytes handed to the channel wait for the kernel; nil while none do.
    private var waitingSince: NIODeadline?
    /// Whether the event loop has been asked to take a batch.
    private var isScheduled = false
    /// No more items are accepted (a close is queued, the connection ended, or the client was dropped).
    private(set) var isFinished = false

    init(limit: Int) {
        self.limit = limit
    }

    /// Queues a frame of `frame.readableBytes` bytes.
    mutating func enqueue(_ frame: ByteBuffer) -> Outcome {
        guard !isFinished else { return .refused }
        pendingBytes += frame.readableBytes
        guard pendingBytes <= limit else {
            isFinished = true
            waiting = []
            return .overflow
        }
        waiting.append(.frame(frame))
        return .queued(schedule: schedule())
    }

    /// Queues a close frame after what is already queued; later frames are refused.
    /// - Returns: Whether the event loop must be asked to write; nil if the queue was already finished.
    mutating func close(_ code: CloseCode) -> Bool? {
        guard !isFinished else { return nil }
        isFinished = true
        waiting.append(.close(code))
        return schedule()
    }

    private mutating func schedule() -> Bool {
        defer { isScheduled = true }
        return !isScheduled
    }

    /// The event loop takes everything waiting, to write it with one flush.
    /// - Returns: The items and the bytes of their frames.
    mutating func takeBatch(now: NIODeadline) -> (items: [Item], bytes: Int) {
        isScheduled = false
        let items = waiting
        waiting = []
        var bytes = 0
        for case .frame(let frame) in items { bytes += frame.readableBytes }
        if bytes > 0 {
            handedBytes += bytes
            if waitingSince == nil { waitingSince = now }
        }
        return (items, bytes)
    }

    /// The kernel took a batch of `bytes` (its last write completed).
    mutating func didWrite(_ bytes: Int, now: NIODeadline) {
        pendingBytes -= bytes
        handedBytes -= bytes
        // Progress: whatever still waits has waited since now.
        waitingSince = handedBytes > 0 ? now : nil
    }

    /// Whether bytes have waited for the kernel for `timeout` or longer at `now` (the client does not read).
    func isStalled(now: NIODeadline, after timeout: TimeAmount) -> Bool {
        guard let since = waitingSince else { return false }
        return now - since >= timeout
    }

    /// Stops accepting frames and forgets what waits (the connection ended, or the client is dropped).
    mutating func finish() {
        isFinished = true
        waiting = []
    }
}
