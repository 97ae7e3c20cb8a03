public import HummingbirdCore
public import Logging
public import NIOCore

extension ConnectionGuard {
    /// Handlers for the raw bytes of a new connection, for servers that decode HTTP in handlers of their own (a
    /// WebSocket upgrade pipeline, which adds ``handlers()`` only after the first request): the address count, and
    /// a deadline for the first request head (its blank line must arrive within ``ConnectionLimits/requestHeadTimeout``).
    /// Both leave the pipeline once their work is done, so upgraded WebSockets pay nothing per frame.
    public func byteHandlers() -> [any ChannelHandler] {
        [AddressCount(guard: self), FirstRequestHeadDeadline(guard: self)]
    }
}

/// A Hummingbird child channel with a ``ConnectionGuard`` in front: ``ConnectionGuard/byteHandlers()`` go first in
/// each new connection's pipeline, then `base` sets up the rest (e.g. `HTTP1WebSocketUpgradeChannel`).
public struct GuardedChildChannel<Base: ServerChildChannel>: ServerChildChannel {
    public typealias Value = Base.Value
    let base: Base
    let guarding: ConnectionGuard

    public init(_ base: Base, guard guarding: ConnectionGuard) {
        self.base = base
        self.guarding = guarding
    }

    public func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        do {
            try channel.pipeline.syncOperations.addHandlers(guarding.byteHandlers())
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return base.setup(channel: channel, logger: logger)
    }

    public func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

/// Closes a connection whose first request head (up to its blank line, `CRLF CRLF`) has not arrived in time, then
/// leaves the pipeline. Later requests on the connection are the HTTP handlers' business.
private final class FirstRequestHeadDeadline: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    private let guarding: ConnectionGuard
    private var deadline: Scheduled<Void>?
    /// The last bytes seen, to find a `CRLF CRLF` split across reads.
    private var tail: [UInt8] = []
    private var done = false

    init(guard: ConnectionGuard) {
        guarding = `guard`
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let guarding = guarding
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: TimeAmount(guarding.limits.requestHeadTimeout)) {
            guarding.refused(channel.remoteAddress?.ipAddress ?? "unknown", .slowRequestHead)
            channel.close(promise: nil)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if !done {
            let buffer = unwrapInboundIn(data)
            let bytes = tail + (buffer.getBytes(at: buffer.readerIndex, length: buffer.readableBytes) ?? [])
            if Self.containsBlankLine(bytes) {
                done = true
                deadline?.cancel()
                deadline = nil
                context.fireChannelRead(data)
                context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
                return
            }
            tail = Array(bytes.suffix(3))
        }
        context.fireChannelRead(data)
    }

    private static func containsBlankLine(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 4 else { return false }
        for index in 0...(bytes.count - 4)
        where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return true
        }
        return false
    }
}
