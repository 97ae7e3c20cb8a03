import BeMyEarsCore
import Logging
import NIOCore
import NIOWebSocket
import Synchronization

/// What every WebSocket of the server shares: the hub, the registry of open sockets and the limits.
final class SignalingSockets: Sendable {
    let hub: SignalingHub
    let registry: WebSocketOutbound
    let logger: Logger
    /// The largest message read at all (frames and reassembled messages): twice the protocol's 65,536 bytes, so
    /// that the hub answers a message up to that size with ERROR PROTOCOL_ERROR before closing 1009; anything
    /// larger is refused here with close 1009, without reading it into memory.
    let readLimit: Int
    /// Unwritten bytes allowed per socket (``OutboundQueue``).
    let outboundLimit: Int
    /// How long a client gets to answer our close frame before the connection is dropped.
    let closeGrace: TimeAmount
    private let writers = Mutex<[ObjectIdentifier: LoopWriter]>([:])

    init(
        hub: SignalingHub, registry: WebSocketOutbound, logger: Logger, readLimit: Int, outboundLimit: Int,
        closeGrace: TimeAmount
    ) {
        self.hub = hub
        self.registry = registry
        self.logger = logger
        self.readLimit = readLimit
        self.outboundLimit = outboundLimit
        self.closeGrace = closeGrace
    }

    /// The writer of the sockets on `eventLoop`.
    func writer(for eventLoop: any EventLoop) -> LoopWriter {
        writers.withLock { writers in
            if let writer = writers[ObjectIdentifier(eventLoop)] { return writer }
            let writer = LoopWriter(eventLoop: eventLoop)
            writers[ObjectIdentifier(eventLoop)] = writer
            return writer
        }
    }

    /// The largest message read for `configuration` (see ``readLimit``).
    static func readLimit(for configuration: SignalingConfiguration) -> Int {
        2 * configuration.maximumMessageBytes
    }
}

/// The sockets of one event loop that have frames to write: the hub's thread marks them, and one task on the loop
/// writes them all, so a PRESENCE to a thousand callers costs a wake-up per event loop, not one per socket.
final class LoopWriter: Sendable {
    let eventLoop: any EventLoop
    /// Where the inbox tasks of this loop's sockets run (``EventLoopTaskExecutor``).
    let taskExecutor: EventLoopTaskExecutor
    private let pending = Mutex<[SignalingSocket]>([])

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
        self.taskExecutor = EventLoopTaskExecutor(eventLoop: eventLoop)
    }

    /// Marks a socket (each at most once until written: its ``OutboundQueue`` says when).
    func schedule(_ socket: SignalingSocket) {
        let first = pending.withLock { pending in
            pending.append(socket)
            return pending.count == 1
        }
        if first { eventLoop.execute { self.writeAll() } }
    }

    private func writeAll() {
        let sockets = pending.withLock { pending in
            defer { pending = [] }
            return pending
        }
        for socket in sockets { socket.writeBatch() }
    }
}

/// Runs tasks on a NIO event loop (SE-0417 task executor preference). A socket's inbox task runs on the thread that
/// read its message, and so does the hub's code it awaits (a default actor runs on its caller's preferred executor):
/// a request and its answer cross no thread unless the hub is busy on the other loop.
final class EventLoopTaskExecutor: TaskExecutor {
    let eventLoop: any EventLoop

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

/// One open WebSocket at `/ws`, between its channel and the hub, with no task of its own while it is quiet.
///
/// - In: its channel handler (``SignalingSocketHandler``, on the event loop) hands each text message to an inbox;
///   a task exists only while the inbox holds something, and gives the hub (``SignalingHub/receive(_:from:)``)
///   one message after the other, in arrival order. A full inbox pauses reading the socket.
/// - Out: the hub's frames (from any thread) join an ``OutboundQueue``; the event loop writes what has gathered
///   with one flush, so a burst of frames for one socket costs one system call, and a burst for many sockets one
///   wake-up of their event loop (``LoopWriter``).
final class SignalingSocket: Sendable {
    /// What the hub is told, in order.
    private enum Inbound {
        case opened
        case text(String)
        case closed
    }

    private struct State {
        var outbound: OutboundQueue
        var inbox: [Inbound] = []
        var inboxHead = 0
        var isDraining = false
        var readsPaused = false
        /// The client was dropped (reported once).
        var isDropped = false
        /// Our close frame is written, or about to be.
        var closeSent = false
        /// The client broke the protocol or sent its close frame: nothing it sends is read any more.
        var inputEnded = false
        /// The client sent its close frame.
        var peerClosed = false
    }

    /// Messages waiting for the hub at which the socket stops being read, and at which it is read again.
    static let inboxHighWater = 64
    static let inboxLowWater = 16

    let session: SessionID
    let channel: any Channel
    private let sockets: SignalingSockets
    private let writer: LoopWriter
    private let state: Mutex<State>

    init(channel: any Channel, sockets: SignalingSockets) {
        self.session = .random()
        self.channel = channel
        self.sockets = sockets
        self.writer = sockets.writer(for: channel.eventLoop)
        self.state = Mutex(State(outbound: OutboundQueue(limit: sockets.outboundLimit)))
    }

    // MARK: - From the channel (on its event loop)

    /// The WebSocket is open: the hub learns of the session.
    func opened() {
        sockets.registry.attach(self)
        _ = push(.opened)
    }

    /// A whole text message arrived.
    /// - Returns: Whether the socket must stop being read until the hub has caught up.
    func received(_ text: String) -> Bool {
        push(.text(text))
    }

    /// A whole binary message arrived: not part of the protocol (text frames only), answered like a frame that
    /// is not JSON, and the session ends.
    func receivedBinary() {
        send(
            WebSocketFrames.text(
                EnvelopeCodec.encode(
                    .error(
                        SignalingError(
                            code: .protocolError,
                            message: "Binary frames are not part of the protocol; send one JSON object per text frame."
                        )
                    )
                )
            )
        )
        fail(.protocolError)
    }

    /// The client broke the WebSocket protocol (or sent more than the read limit): close with `code`, read
    /// nothing more, and end the session now.
    func fail(_ code: CloseCode) {
        let ended = state.withLock { state in
            defer { state.inputEnded = true }
            return state.inputEnded
        }
        close(code)
        if !ended { _ = push(.closed) }
    }

    /// The client sent a close frame: answer it (with its code, RFC 6455 §5.5.1) unless ours went first, then
    /// close the connection once that is written.
    func peerClosed(_ payload: ByteBuffer) {
        var payload = payload
        let length = payload.readableBytes
        let code = payload.readInteger(as: UInt16.self)
        let (ended, closeSent) = state.withLock { state in
            defer {
                state.inputEnded = true
                state.peerClosed = true
            }
            return (state.inputEnded, state.closeSent)
        }
        if closeSent {
            channel.close(promise: nil)  // The closing handshake is complete.
        } else {
            let reply: UInt16 = length == 0 ? 1000 : code.flatMap { Self.isValidCloseCode($0) ? $0 : nil } ?? 1002
            close(CloseCode(rawValue: reply))
        }
        if !ended { _ = push(.closed) }
    }

    /// RFC 6455 §7.4: codes a peer may send.
    private static func isValidCloseCode(_ code: UInt16) -> Bool {
        switch code {
        case 1000...1003, 1007...1011, 3000...4999: true
        default: false
        }
    }

    /// Answers a ping (unless our close frame has gone: nothing follows it).
    func ping(_ payload: ByteBuffer) {
        guard !state.withLock({ $0.closeSent }) else { return }
        channel.writeAndFlush(WebSocketFrames.pong(payload), promise: nil)
    }

    /// The connection is gone: the hub ends the session (after the messages before it).
    func ended() {
        let ended = state.withLock { state in
            defer {
                state.inputEnded = true
                state.outbound.finish()
            }
            return state.inputEnded
        }
        if !ended { _ = push(.closed) }
    }

    private func push(_ item: Inbound) -> Bool {
        let (start, pause) = state.withLock { state in
            // Nothing the client sends after its close frame or a protocol violation reaches the hub.
            if case .text = item, state.inputEnded { return (false, false) }
            state.inbox.append(item)
            let start = !state.isDraining
            state.isDraining = true
            let pause = !state.readsPaused && state.inbox.count - state.inboxHead >= Self.inboxHighWater
            if pause { state.readsPaused = true }
            return (start, pause)
        }
        if start { Task(executorPreference: writer.taskExecutor) { await self.drain() } }
        return pause
    }

    /// Gives the hub what arrived, one item after the other, until the inbox is empty.
    private func drain() async {
        let hub = sockets.hub
        while let item = next() {
            switch item {
            case .opened:
                await hub.connect(session)
            case .text(let text):
                await hub.receive(text, from: session)
            case .closed:
                await hub.disconnect(session)
                sockets.registry.detach(self)
            }
        }
    }

    private func next() -> Inbound? {
        let (item, resume): (Inbound?, Bool) = state.withLock { state in
            guard state.inboxHead < state.inbox.count else {
                state.isDraining = false
                return (nil, false)
            }
            let item = state.inbox[state.inboxHead]
            state.inboxHead += 1
            if state.inboxHead == state.inbox.count {
                state.inbox = []
                state.inboxHead = 0
            }
            let resume = state.readsPaused && state.inbox.count - state.inboxHead <= Self.inboxLowWater
            if resume { state.readsPaused = false }
            return (item, resume)
        }
        if resume { channel.setOption(ChannelOptions.autoRead, value: true).whenComplete { _ in } }
        return item
    }

    // MARK: - From the hub (any thread)

    /// Queues a whole frame (``WebSocketFrames``); written with whatever else gathers before the event loop runs.
    func send(_ frame: ByteBuffer) {
        switch state.withLock({ $0.outbound.enqueue(frame) }) {
        case .queued(let schedule):
            if schedule { scheduleWrite() }
        case .refused:
            break
        case .overflow:
            drop(.outboundBufferFull)
        }
    }

    /// Queues a close frame after what is queued; the connection closes once the client answers it, or after
    /// the grace period.
    func close(_ code: CloseCode) {
        if state.withLock({ $0.outbound.close(code) }) == true { scheduleWrite() }
    }

    private func scheduleWrite() {
        writer.schedule(self)
    }

    /// On the event loop: writes what has gathered, with one flush.
    fileprivate func writeBatch() {
        let now = NIODeadline.now()
        let ((items, bytes), peerClosed) = state.withLock { state in
            let batch = state.outbound.takeBatch(now: now)
            if batch.items.contains(where: { if case .close = $0 { true } else { false } }) { state.closeSent = true }
            return (batch, state.peerClosed)
        }
        guard !items.isEmpty else { return }
        let channel = channel
        let lastFrame = items.lastIndex { if case .frame = $0 { true } else { false } }
        for (index, item) in items.enumerated() {
            switch item {
            case .frame(let frame):
                if index == lastFrame {
                    let promise = channel.eventLoop.makePromise(of: Void.self)
                    promise.futureResult.whenSuccess { self.didWrite(bytes) }
                    channel.write(frame, promise: promise)
                } else {
                    channel.write(frame, promise: nil)
                }
            case .close(let code):
                if peerClosed {
                    // The closing handshake is complete once our answer is out.
                    channel.writeAndFlush(WebSocketFrames.close(code)).whenComplete { _ in channel.close(promise: nil) }
                } else {
                    // Our FIN follows the close frame; the client answers and closes its side (read to the end, so
                    // that what it still sends cannot turn our close into a reset that loses the close frame).
                    channel.writeAndFlush(WebSocketFrames.close(code), promise: nil)
                    channel.close(mode: .output, promise: nil)
                    channel.eventLoop.scheduleTask(in: sockets.closeGrace) { channel.close(promise: nil) }
                }
            }
        }
        channel.flush()
    }

    private func didWrite(_ bytes: Int) {
        state.withLock { $0.outbound.didWrite(bytes, now: .now()) }
    }

    // MARK: - Clients that do not read

    /// Drops the client if bytes have waited for its socket for `timeout` (it does not read).
    /// - Returns: Whether it did.
    @discardableResult
    func dropIfStalled(now: NIODeadline, after timeout: TimeAmount) -> Bool {
        guard state.withLock({ $0.outbound.isStalled(now: now, after: timeout) }) else { return false }
        return drop(.writeStalled)
    }

    @discardableResult
    private func drop(_ reason: OutboundQueue.DropReason) -> Bool {
        let first = state.withLock { state in
            defer {
                state.isDropped = true
                state.outbound.finish()
            }
            return !state.isDropped
        }
        guard first else { return false }
        // The client does not read: drop the TCP connection (a close frame could not reach it anyway).
        sockets.logger.notice("event=session_dropped reason=\(reason.rawValue) sessionId=\(session)")
        channel.close(promise: nil)
        return true
    }
}

/// The channel handler of an upgraded `/ws` connection: frames from NIO's decoder in, whole messages to the
/// ``SignalingSocket``. Control frames are answered here; a protocol violation closes with 1002 (1007 for text
/// that is not UTF-8, 1009 over the read limit).
final class SignalingSocketHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame

    let socket: SignalingSocket
    private let readLimit: Int
    /// A fragmented message being reassembled, and whether it is text.
    private var message: ByteBuffer?
    private var messageIsText = true
    /// A close for a protocol violation is on its way: nothing more is read.
    private var isFailing = false

    init(socket: SignalingSocket, readLimit: Int) {
        self.socket = socket
        self.readLimit = readLimit
    }

    func handlerAdded(context: ChannelHandlerContext) {
        socket.opened()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !isFailing else { return }
        let frame = unwrapInboundIn(data)
        // RFC 6455 §5.1 and §5.2: a client masks every frame; no extension was negotiated, so no reserved bit.
        guard frame.maskKey != nil, !frame.rsv1, !frame.rsv2, !frame.rsv3 else { return fail(.protocolError, context) }
        switch frame.opcode {
        case .text, .binary:
            guard message == nil else { return fail(.protocolError, context) }
            if frame.fin {
                deliver(frame.unmaskedData, isText: frame.opcode == .text, context: context)
            } else {
                message = frame.unmaskedData
                messageIsText = frame.opcode == .text
            }
        case .continuation:
            guard var partial = message else { return fail(.protocolError, context) }
            message = nil
            var data = frame.unmaskedData
            guard partial.readableBytes + data.readableBytes <= readLimit else {
                return fail(.messageTooBig, context)
            }
            partial.writeBuffer(&data)
            if frame.fin {
                deliver(partial, isText: messageIsText, context: context)
            } else {
                message = partial
            }
        case .ping:
            socket.ping(frame.unmaskedData)
        case .pong:
            break
        case .connectionClose:
            message = nil
            isFailing = true
            socket.peerClosed(frame.unmaskedData)
        default:
            fail(.protocolError, context)
        }
    }

    private func deliver(_ data: ByteBuffer, isText: Bool, context: ChannelHandlerContext) {
        guard isText else {
            isFailing = true
            socket.receivedBinary()
            return
        }
        guard let text = String(validating: data.readableBytesView, as: UTF8.self) else {
            return fail(CloseCode(rawValue: 1007), context)  // RFC 6455 §8.1: text that is not UTF-8.
        }
        if socket.received(text) {
            context.channel.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in }
        }
    }

    private func fail(_ code: CloseCode, _ context: ChannelHandlerContext) {
        isFailing = true
        message = nil
        socket.fail(code)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard !isFailing else { return }  // E.g. the decoder's complaints about data after its own error.
        if let error = error as? NIOWebSocketError {
            fail(error == .invalidFrameLength ? .messageTooBig : .protocolError, context)
        } else {
            context.close(promise: nil)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .inputClosed = event as? ChannelEvent {
            // The client closed its side (after our close frame, or without one): nothing more can come.
            context.close(promise: nil)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        socket.ended()
        context.fireChannelInactive()
    }
}
