public import NIOCore
public import NIOHTTPTypes
import Synchronization

/// What one HTTP server allows a client, against slow and greedy ones (slowloris and connection hoarding).
public struct ConnectionLimits: Sendable, Hashable {
    /// From a connection's start, and from the end of each response, to a complete request head: a client that
    /// sends its headers a byte at a time is closed when it runs out.
    public var requestHeadTimeout: Duration
    /// A connection that sends nothing for this long is closed (Hummingbird's idle timeout).
    public var idleTimeout: Duration
    /// Connections one address may hold open at once; the next is closed as it opens.
    public var connectionsPerAddress: Int

    public init(
        requestHeadTimeout: Duration = .seconds(10), idleTimeout: Duration = .seconds(60),
        connectionsPerAddress: Int = 64
    ) {
        self.requestHeadTimeout = requestHeadTimeout
        self.idleTimeout = idleTimeout
        self.connectionsPerAddress = connectionsPerAddress
    }

    /// ``idleTimeout`` as NIO counts time (for `HTTP1Channel.Configuration(idleTimeout:)`).
    public var idleTimeAmount: TimeAmount { TimeAmount(idleTimeout) }
}

/// Keeps a server's ``ConnectionLimits``: one per server, shared by its connections. Give ``handlers()`` to
/// Hummingbird's HTTP/1 configuration (`additionalChannelHandlers`) and ``ConnectionLimits/idleTimeAmount`` as its
/// idle timeout.
public final class ConnectionGuard: Sendable {
    public let limits: ConnectionLimits
    private let open = Mutex<[String: Int]>([:])
    /// Called (on an event loop; it must return quickly) for each connection refused or cut, with why.
    private let onRefusal: @Sendable (_ address: String, _ reason: Refusal) -> Void

    /// Why a connection was closed.
    public enum Refusal: String, Sendable {
        case tooManyConnections = "too_many_connections"
        case slowRequestHead = "slow_request_head"
    }

    public init(
        _ limits: ConnectionLimits = ConnectionLimits(),
        onRefusal: @escaping @Sendable (_ address: String, _ reason: Refusal) -> Void = { _, _ in }
    ) {
        self.limits = limits
        self.onRefusal = onRefusal
    }

    /// The handlers for one new connection.
    public func handlers() -> [any RemovableChannelHandler] {
        [AddressCount(guard: self), RequestHeadDeadline(guard: self)]
    }

    /// For a server that adds ``byteHandlers()`` in front: the request-head deadline for a connection's later
    /// requests (give these to its HTTP/1 configuration; the address is already counted).
    public func laterRequestHandlers() -> [any RemovableChannelHandler] {
        [RequestHeadDeadline(guard: self)]
    }

    /// Connections open now from `address`.
    public func openConnections(from address: String) -> Int {
        open.withLock { $0[address] ?? 0 }
    }

    /// Counts a connection in; false when its address already holds the most it may.
    func admit(_ address: String) -> Bool {
        open.withLock { open in
            let count = open[address] ?? 0
            guard count < limits.connectionsPerAddress else { return false }
            open[address] = count + 1
            return true
        }
    }

    func release(_ address: String) {
        open.withLock { open in
            let count = (open[address] ?? 1) - 1
            open[address] = count > 0 ? count : nil
        }
    }

    func refused(_ address: String, _ reason: Refusal) {
        onRefusal(address, reason)
    }
}

/// Counts the connection against its address for as long as the channel lives (an upgrade to a WebSocket removes
/// this handler, not the count), and closes it at once when the address holds too many.
final class AddressCount: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    private let guarding: ConnectionGuard

    init(guard: ConnectionGuard) {
        guarding = `guard`
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let address = context.channel.remoteAddress?.ipAddress ?? "unknown"
        guard guarding.admit(address) else {
            guarding.refused(address, .tooManyConnections)
            context.close(promise: nil)
            return
        }
        let guarding = guarding
        context.channel.closeFuture.whenComplete { _ in guarding.release(address) }
    }
}

/// Closes a connection whose request head does not arrive in time: counted from the connection's start and from
/// the end of each response (a server still answering, e.g. an event stream, is never cut).
private final class RequestHeadDeadline: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart
    private let guarding: ConnectionGuard
    private var deadline: Scheduled<Void>?

    init(guard: ConnectionGuard) {
        guarding = `guard`
    }

    func handlerAdded(context: ChannelHandlerContext) {
        arm(context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) {
            deadline?.cancel()
            deadline = nil
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { arm(context) }
        context.write(data, promise: promise)
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        context.fireChannelInactive()
    }

    private func arm(_ context: ChannelHandlerContext) {
        deadline?.cancel()
        let guarding = guarding
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: TimeAmount(guarding.limits.requestHeadTimeout)) {
            guarding.refused(channel.remoteAddress?.ipAddress ?? "unknown", .slowRequestHead)
            channel.close(promise: nil)
        }
    }
}
