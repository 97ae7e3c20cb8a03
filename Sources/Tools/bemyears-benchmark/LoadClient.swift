import BenchmarkSupport
import Foundation
import NIOCore
import NIOPosix
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Connections whose WebSocket handshake has been started and not yet answered (or failed); the ramp-up in
/// ``measure(_:name:connections:watchers:pairs:)`` waits on it so 20,000 connects never become a SYN flood.
private let handshakesInFlight = Atomic<Int>(0)
/// Connections started so far: connection i binds its source address to 127.0.0.(2 + i % 8).
private let connectionsStarted = Atomic<Int>(0)
/// Connections that never completed their handshake, and the first reason (for one line in the report).
private let connectFailures = Mutex<(count: Int, first: String?)>((0, nil))

/// One WebSocket client of the load generator, speaking BEMYEARS-PROTOCOL.md with plain JSON text (independent of
/// the server's codec): it registers, sends HEARTBEAT every 15 s, hands every message it receives to `onMessage`,
/// and sends what `send(_:)` is given, until `close()`.
///
/// The generator shares the machine's two cores with the server under test, so its own cost is inside every figure:
/// a connection is one NIO channel with one handler on the shared event loops (``LoadClientHandler``: hand-written
/// handshake and RFC 6455 framing, a repeating timer for heartbeats) and no task, and a message is never parsed as
/// JSON (``Message`` finds `type` and `callId` by a byte scan).
final class LoadClient: Sendable {
    /// A server message as it arrived: its text, its `type` and when it arrived (CLOCK_MONOTONIC nanoseconds).
    ///
    /// Both servers under test encode compactly (no whitespace) with `type` first and `callId` second (our
    /// EnvelopeCodec and the Node anchor's JSON.stringify), and neither a type, a username nor a call id needs a JSON
    /// escape, so the first `"type":"` and `"callId":"` are the envelope's and their values end at the next quote.
    struct Message: Sendable {
        let text: String
        let type: String
        let arrived: Int64

        init(text: String, arrived: Int64) {
            self.text = text
            self.arrived = arrived
            type = Self.value(after: #""type":""#, in: text) ?? ""
        }

        /// The envelope's call id (nil: none).
        var callId: String? { Self.value(after: #""callId":""#, in: text) }

        /// Whether the text holds `fragment` byte for byte (a byte search, not a Unicode-aware String search).
        func contains(_ fragment: String) -> Bool {
            var text = text
            var fragment = fragment
            return text.withUTF8 { haystack in
                fragment.withUTF8 { firstOffset(of: .init($0), in: .init(haystack)) != nil }
            }
        }

        /// The string value that follows the first `marker` (which ends with the value's opening quote).
        private static func value(after marker: String, in text: String) -> String? {
            var text = text
            var marker = marker
            return text.withUTF8 { haystack in
                marker.withUTF8 { needle -> String? in
                    guard let offset = firstOffset(of: .init(needle), in: .init(haystack)) else { return nil }
                    let start = offset + needle.count
                    guard let end = haystack[start...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
                    return String(decoding: haystack[start..<end], as: UTF8.self)
                }
            }
        }
    }

    /// What the connection's handler reports, read from any thread.
    fileprivate final class Flags: Sendable {
        let registered = Atomic<Bool>(false)
        let closed = Atomic<Bool>(false)
        let lastAck = Atomic<Int64>(0)
        /// When REGISTER was written, and REGISTERED arrived (0: not yet).
        let registerSent = Atomic<Int64>(0)
        let registeredAt = Atomic<Int64>(0)
        /// When the last HEARTBEAT was written; each ACK's delay after it.
        let heartbeatSent = Atomic<Int64>(0)
        let ackDelays = Mutex<[Int64]>([])
        /// Until the handshake is answered or fails; ends the connection's share of `handshakesInFlight` once.
        private let handshaking = Atomic<Bool>(true)

        /// The handshake is over (answered, failed or never started): no longer in flight.
        func endHandshake(failure: String? = nil) {
            guard handshaking.exchange(false, ordering: .acquiringAndReleasing) else { return }
            handshakesInFlight.subtract(1, ordering: .relaxed)
            guard let failure else { return }
            connectFailures.withLock { failures in
                failures.count += 1
                if failures.first == nil { failures.first = failure }
            }
        }
    }

    let username: String
    fileprivate let role: String
    fileprivate let heartbeat: Duration
    fileprivate let onMessage: @Sendable (LoadClient, Message) -> Void
    fileprivate let flags = Flags()
    /// The connected channel (failed: the connection could not be made).
    private let channel: EventLoopFuture<any Channel>

    var isRegistered: Bool { flags.registered.load(ordering: .acquiring) }
    var isClosed: Bool { flags.closed.load(ordering: .acquiring) }
    /// When the last HEARTBEAT_ACK arrived (0: none yet).
    var lastHeartbeatAck: Int64 { flags.lastAck.load(ordering: .acquiring) }
    /// From writing REGISTER to REGISTERED's arrival, in nanoseconds (nil: not registered).
    var registerLatency: Int64? {
        let arrived = flags.registeredAt.load(ordering: .acquiring)
        return arrived == 0 ? nil : arrived - flags.registerSent.load(ordering: .acquiring)
    }
    /// The delay of each HEARTBEAT_ACK after its HEARTBEAT, in nanoseconds.
    var heartbeatAckDelays: [Int64] { flags.ackDelays.withLock { $0 } }

    /// Connections whose handshake is under way.
    static var handshakesPending: Int { handshakesInFlight.load(ordering: .relaxed) }
    /// Connections that failed before their handshake completed, and the first reason.
    static var failures: (count: Int, first: String?) { connectFailures.withLock { $0 } }

    /// Starts connecting to `url` (ws://host:port/path); returns at once.
    ///
    /// When the server is on IPv4 loopback, connection i binds its source address to 127.0.0.(2 + i % 8): one
    /// source address has about 28,000 ephemeral ports, fewer than the connections a run may hold (and leave in
    /// TIME_WAIT).
    init(
        url: String,
        username: String,
        role: String,
        heartbeat: Duration = .seconds(15),
        onMessage: @escaping @Sendable (LoadClient, Message) -> Void = { _, _ in }
    ) {
        self.username = username
        self.role = role
        self.heartbeat = heartbeat
        self.onMessage = onMessage
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let connected = loop.makePromise(of: (any Channel).self)
        channel = connected.futureResult
        handshakesInFlight.add(1, ordering: .relaxed)
        let flags = flags
        channel.whenFailure { error in
            flags.closed.store(true, ordering: .releasing)
            flags.endHandshake(failure: "connect: \(error)")
        }
        guard let parsed = URL(string: url), let host = parsed.host, let port = parsed.port,
            let server = try? SocketAddress(ipAddress: host, port: port)
        else {
            connected.fail(BenchmarkFailure(description: "\(url) is not ws://<IP address>:<port>/<path>"))
            return
        }
        let index = connectionsStarted.wrappingAdd(1, ordering: .relaxed).oldValue
        var bootstrap = ClientBootstrap(group: loop)
            .channelOption(.socketOption(.so_reuseaddr), value: 1)
            .channelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture {
                    let handler = LoadClientHandler(
                        client: self, host: "\(host):\(port)", path: parsed.path.isEmpty ? "/" : parsed.path)
                    try channel.pipeline.syncOperations.addHandler(handler)
                }
            }
        if host.hasPrefix("127."), let source = try? SocketAddress(ipAddress: "127.0.0.\(2 + index % 8)", port: 0) {
            bootstrap = bootstrap.bind(to: source)
        }
        bootstrap.connect(to: server).cascade(to: connected)
    }

    /// Sends one JSON text frame (after REGISTER, should the handshake still be under way).
    func send(_ json: String) {
        channel.whenSuccess { $0.writeAndFlush(json, promise: nil) }
    }

    /// Closes the socket (a close frame, normal closure, then the channel) and waits until it is gone.
    func close() async {
        guard let channel = try? await channel.get() else { return }
        channel.close(promise: nil)
        try? await channel.closeFuture.get()
    }

    /// Closes all of `clients` at once and waits until they are gone (one at a time would take a round trip each).
    static func close(_ clients: [LoadClient]) async {
        for client in clients { client.channel.whenSuccess { $0.close(promise: nil) } }
        for client in clients { await client.close() }
    }

    /// Waits until registered (or closed, or `timeout`).
    func waitRegistered(timeout: Duration = .seconds(30)) async -> Bool {
        await Self.waitRegistered([self], timeout: timeout) == 1
    }

    /// Waits until each of `clients` is registered or closed (or `timeout` for all of them together), checking all
    /// every 20 ms rather than each in turn; returns how many registered.
    static func waitRegistered(_ clients: [LoadClient], timeout: Duration = .seconds(30)) async -> Int {
        let deadline = ContinuousClock.now + timeout
        var waiting = clients
        while true {
            waiting.removeAll { $0.isRegistered || $0.isClosed }
            if waiting.isEmpty || ContinuousClock.now >= deadline { break }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return clients.count { $0.isRegistered }
    }
}

/// The whole client side of one connection, on its event loop: writes the HTTP upgrade request, checks the `101`,
/// then reads RFC 6455 frames from the server (unmasked: text, continuation, close, ping) and masks what it writes
/// (text given to the channel as `String`, pong, close).
///
/// Frames are cut by hand from one cumulation buffer rather than with NIOWebSocket's decoder, encoder and upgrader
/// handlers: one handler per connection is the least the load generator can cost the server it shares the cores
/// with.
private final class LoadClientHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = String
    typealias OutboundOut = ByteBuffer

    /// The largest message accepted (1 MiB: far above any BEMYEARS message), and the largest response head.
    private static let maximumMessageBytes = 1 << 20
    private static let maximumHeadBytes = 16_384
    private static let headEnd = Array("\r\n\r\n".utf8)

    /// Held until the channel closes (the client is handed to `onMessage`), then released.
    private var client: LoadClient?
    private let flags: LoadClient.Flags
    private let request: String
    /// The masking key of every frame of this connection (RFC 6455 asks for a fresh one per frame, so that a
    /// script cannot choose the bytes on the wire; nothing here is a script, and a fixed key costs nothing).
    private let mask: UInt32
    private var upgraded = false
    private var closeSent = false
    private var cumulation: ByteBuffer?
    /// The text message whose continuation frames are still to come.
    private var fragments: ByteBuffer?
    /// Texts written before the handshake was answered.
    private var pending: [(text: String, promise: EventLoopPromise<Void>?)] = []
    private var heartbeats: RepeatedTask?

    init(client: LoadClient, host: String, path: String) {
        self.client = client
        flags = client.flags
        var random = SystemRandomNumberGenerator()
        var key = [UInt8](repeating: 0, count: 16)
        withUnsafeBytes(of: (random.next() as UInt64, random.next() as UInt64)) { key = Array($0) }
        mask = random.next()
        request =
            "GET \(path) HTTP/1.1\r\nHost: \(host)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: \(Data(key).base64EncodedString())\r\nSec-WebSocket-Version: 13\r\n\r\n"
    }

    func channelActive(context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: request)), promise: nil)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        heartbeats?.cancel()
        heartbeats = nil
        flags.endHandshake(failure: "closed before the handshake was answered")
        flags.closed.store(true, ordering: .releasing)
        for write in pending { write.promise?.fail(ChannelError.ioOnClosedChannel) }
        pending = []
        client = nil  // ends the cycle client → channel → handler → client
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        client = nil
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        flags.endHandshake(failure: "\(error)")
        context.close(promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var incoming = unwrapInboundIn(data)
        var buffer: ByteBuffer
        if var held = cumulation.take() {
            held.writeBuffer(&incoming)
            buffer = held
        } else {
            buffer = incoming
        }
        if !upgraded {
            guard readResponseHead(from: &buffer, context: context) else {
                if buffer.readableBytes > 0 { cumulation = buffer }
                return
            }
        }
        while context.channel.isActive, readFrame(from: &buffer, context: context) {}
        if buffer.readableBytes > 0 {
            buffer.discardReadBytes()
            cumulation = buffer
        }
    }

    /// Text written to the channel: framed and masked, or held until the handshake is answered.
    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let text = unwrapOutboundIn(data)
        guard upgraded else {
            pending.append((text, promise))
            return
        }
        context.write(wrapOutboundOut(frame(opcode: 0x1, text.utf8, context: context)), promise: promise)
    }

    /// Any close of the channel says goodbye first: a close frame with status 1000 (normal closure).
    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if mode == .all { sendClose(status: 1000, context: context) }
        context.close(mode: mode, promise: promise)
    }

    /// Consumes the response head once it is complete; true when it is a `101` and the frames may start.
    private func readResponseHead(from buffer: inout ByteBuffer, context: ChannelHandlerContext) -> Bool {
        let end = buffer.withUnsafeReadableBytes { bytes in
            Self.headEnd.withUnsafeBytes { firstOffset(of: $0, in: bytes) }
        }
        guard let end else {
            if buffer.readableBytes > Self.maximumHeadBytes { fail("the response head never ended", context: context) }
            return false
        }
        let head = buffer.readString(length: end + 4) ?? ""
        guard head.hasPrefix("HTTP/1.1 101 ") || head.hasPrefix("HTTP/1.1 101\r"),
            head.range(of: "\r\nsec-websocket-accept:", options: .caseInsensitive) != nil
        else {
            fail("handshake answered \(head.prefix { $0 != "\r" })", context: context)
            return false
        }
        upgraded = true
        flags.endHandshake()
        guard let client else { return true }
        flags.registerSent.store(monotonicNanoseconds(), ordering: .releasing)
        let register = #"{"type":"REGISTER","payload":{"username":"\#(client.username)","role":"\#(client.role)"}}"#
        context.write(wrapOutboundOut(frame(opcode: 0x1, register.utf8, context: context)), promise: nil)
        for write in pending {
            context.write(
                wrapOutboundOut(frame(opcode: 0x1, write.text.utf8, context: context)), promise: write.promise)
        }
        pending = []
        context.flush()
        // One timer on the connection's own event loop, rather than a task per connection sleeping 15 s.
        let channel = context.channel
        let flags = flags
        let interval = TimeAmount(client.heartbeat)
        heartbeats = context.eventLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { _ in
            flags.heartbeatSent.store(monotonicNanoseconds(), ordering: .releasing)
            channel.writeAndFlush(#"{"type":"HEARTBEAT"}"#, promise: nil)
        }
        return true
    }

    /// Consumes one whole frame from `buffer` and acts on it; false when the frame is not complete yet (or the
    /// connection failed).
    private func readFrame(from buffer: inout ByteBuffer, context: ChannelHandlerContext) -> Bool {
        let start = buffer.readerIndex
        guard let first = buffer.getInteger(at: start, as: UInt8.self),
            let second = buffer.getInteger(at: start + 1, as: UInt8.self)
        else { return false }
        var headerBytes = 2
        var length = Int(second & 0x7F)
        if length == 126 {
            guard let extended = buffer.getInteger(at: start + 2, as: UInt16.self) else { return false }
            headerBytes = 4
            length = Int(extended)
        } else if length == 127 {
            guard let extended = buffer.getInteger(at: start + 2, as: UInt64.self) else { return false }
            headerBytes = 10
            length = extended > UInt64(Self.maximumMessageBytes) ? Self.maximumMessageBytes + 1 : Int(extended)
        }
        guard second & 0x80 == 0 else {
            fail("the server masked a frame", context: context)
            return false
        }
        guard length <= Self.maximumMessageBytes else {
            fail("a frame of more than \(Self.maximumMessageBytes) bytes", context: context)
            return false
        }
        guard buffer.readableBytes >= headerBytes + length else { return false }
        buffer.moveReaderIndex(forwardBy: headerBytes)
        var payload = buffer.readSlice(length: length)!
        let final = first & 0x80 != 0
        switch first & 0x0F {
        case 0x1 where final: deliver(payload)
        case 0x1: fragments = payload
        case 0x0:
            guard var message = fragments.take() else { break }
            message.writeBuffer(&payload)
            guard message.readableBytes <= Self.maximumMessageBytes else {
                fail("a message of more than \(Self.maximumMessageBytes) bytes", context: context)
                return false
            }
            if final { deliver(message) } else { fragments = message }
        case 0x8:
            sendClose(status: payload.getInteger(at: payload.readerIndex, as: UInt16.self) ?? 1000, context: context)
            context.close(promise: nil)
            return false
        case 0x9:
            context.writeAndFlush(
                wrapOutboundOut(frame(opcode: 0xA, payload.readableBytesView, context: context)), promise: nil)
        default: break  // pong, binary: nothing the protocol sends or asks of a client
        }
        return true
    }

    /// Hands one text message to the flags and to the client's `onMessage`.
    private func deliver(_ payload: ByteBuffer) {
        let message = LoadClient.Message(text: String(buffer: payload), arrived: monotonicNanoseconds())
        switch message.type {
        case "REGISTERED":
            flags.registeredAt.store(message.arrived, ordering: .releasing)
            flags.registered.store(true, ordering: .releasing)
        case "HEARTBEAT_ACK":
            flags.lastAck.store(message.arrived, ordering: .releasing)
            let sent = flags.heartbeatSent.load(ordering: .acquiring)
            if sent > 0 { flags.ackDelays.withLock { $0.append(message.arrived - sent) } }
        default: break
        }
        if let client { client.onMessage(client, message) }
    }

    /// Writes the close frame (once, and only on an upgraded connection).
    private func sendClose(status: UInt16, context: ChannelHandlerContext) {
        guard upgraded, !closeSent, context.channel.isActive else { return }
        closeSent = true
        let code = [UInt8(status >> 8), UInt8(status & 0xFF)]
        context.writeAndFlush(wrapOutboundOut(frame(opcode: 0x8, code, context: context)), promise: nil)
    }

    private func fail(_ reason: String, context: ChannelHandlerContext) {
        flags.endHandshake(failure: reason)
        context.close(promise: nil)
    }

    /// One final frame of `opcode` carrying `payload`, masked as every client frame must be.
    private func frame(opcode: UInt8, _ payload: some Collection<UInt8>, context: ChannelHandlerContext) -> ByteBuffer {
        let count = payload.count
        var buffer = context.channel.allocator.buffer(capacity: count + 14)
        buffer.writeInteger(0x80 | opcode)
        switch count {
        case ..<126: buffer.writeInteger(UInt8(0x80 | count))
        case ...0xFFFF:
            buffer.writeInteger(UInt8(0x80 | 126))
            buffer.writeInteger(UInt16(count))
        default:
            buffer.writeInteger(UInt8(0x80 | 127))
            buffer.writeInteger(UInt64(count))
        }
        buffer.writeInteger(mask)
        let mask = mask
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { output in
            var index = 0
            for byte in payload {
                output[index] = byte ^ UInt8(truncatingIfNeeded: mask >> (24 - 8 * (index & 3)))
                index += 1
            }
            return count
        }
        return buffer
    }
}

@available(*, unavailable)
extension LoadClientHandler: Sendable {}

/// The offset of the first `needle` in `haystack`: every message is scanned this way, so by memchr for the first
/// byte and memcmp for the rest (Glibc's memmem is not visible to Swift without _GNU_SOURCE).
private func firstOffset(of needle: UnsafeRawBufferPointer, in haystack: UnsafeRawBufferPointer) -> Int? {
    guard let base = haystack.baseAddress, let pattern = needle.baseAddress, needle.count <= haystack.count else {
        return nil
    }
    let last = haystack.count - needle.count  // the last offset where the needle still fits
    var offset = 0
    while offset <= last {
        guard let hit = memchr(base + offset, Int32(needle[0]), last - offset + 1) else { return nil }
        let found = base.distance(to: UnsafeRawPointer(hit))
        if memcmp(hit, pattern, needle.count) == 0 { return found }
        offset = found + 1
    }
    return nil
}
