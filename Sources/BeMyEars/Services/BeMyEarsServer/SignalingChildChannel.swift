import Crypto
import Foundation
import HTTPTypes
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOWebSocket

/// Each connection of the server: HTTP/1.1 for the browser client and `/health`, answered by Hummingbird, or a
/// WebSocket upgrade at `/ws` that becomes a ``SignalingSocket``.
///
/// An upgraded WebSocket lives in its channel's handlers alone: no task waits on it (Hummingbird's own WebSocket
/// support keeps a task and an async stream per connection, which cost more memory than the rest of the
/// connection), so ``handle(value:logger:)`` returns at once for it. The server closes them itself when it shuts
/// down (``WebSocketOutbound/closeAll(code:)``).
struct SignalingChildChannel: ServerChildChannel, HTTPChannelHandler {
    enum Upgrade: Sendable {
        case webSocket
        case http(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
        /// An upgrade to `/ws` refused (a page of another site, a bad handshake): HTTP 400 and close.
        case refused(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
    }

    struct Value: ServerChildChannelValue {
        let upgrade: EventLoopFuture<Upgrade>
        let channel: any Channel
    }

    let responder: HTTPChannelHandler.Responder
    let http1: HTTP1Channel.Configuration
    let sockets: SignalingSockets
    /// Whether an upgrade request may become a WebSocket (its `Origin`, see ``OriginPolicy``).
    let admits: @Sendable (HTTPRequestHead) -> Bool

    init(
        responder: @escaping HTTPChannelHandler.Responder,
        http1: HTTP1Channel.Configuration,
        sockets: SignalingSockets,
        admits: @escaping @Sendable (HTTPRequestHead) -> Bool
    ) {
        self.responder = Self.redirectingLateUpgrades(responder)
        self.http1 = http1
        self.sockets = sockets
        self.admits = admits
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            // Reads start small and grow with what the client sends: most connections only ever read heartbeats.
            try channel.syncOptions?.setOption(
                ChannelOptions.recvAllocator,
                value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 512, maximum: 65536)
            )
            let attempted = NIOLoopBoundBox(false, eventLoop: channel.eventLoop)
            let upgrader = SignalingUpgrader(sockets: sockets, admits: admits) { attempted.value = true }
            let http1 = http1
            let configuration = NIOTypedHTTPServerUpgradeConfiguration<Upgrade>(
                upgraders: [upgrader],
                notUpgradingCompletionHandler: { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let operations = channel.pipeline.syncOperations
                        try operations.addHandler(HTTP1ToHTTPServerCodec(secure: false))
                        try operations.addHandlers(http1.additionalChannelHandlers())
                        try operations.addHandler(
                            HTTPConnectionStateHandler(idleTimeout: http1.idleTimeout.map { .init($0) }, logger: logger)
                        )
                        let asyncChannel = try NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>(
                            wrappingChannelSynchronously: channel,
                            configuration: .init(isOutboundHalfClosureEnabled: true)
                        )
                        return attempted.value ? .refused(asyncChannel) : .http(asyncChannel)
                    }
                }
            )
            var pipeline = NIOUpgradableHTTPServerPipelineConfiguration<Upgrade>(upgradeConfiguration: configuration)
            pipeline.enablePipelining = false  // NIOAsyncChannel serves one request after the other
            pipeline.enableErrorHandling = false  // Hummingbird answers errors
            pipeline.enableResponseHeaderValidation = false  // HTTP types validate already
            pipeline.decoderConfiguration.maxHeaderFieldSize = http1.httpDecoder.maxHeaderFieldSize
            pipeline.decoderConfiguration.maxHeaderListSize = http1.httpDecoder.maxHeaderListSize
            pipeline.decoderConfiguration.maxHeaderFieldCount = http1.httpDecoder.maxHeaderFieldCount
            let upgrade = try channel.pipeline.syncOperations.configureUpgradableHTTPServerPipeline(
                configuration: pipeline)
            return Value(upgrade: upgrade, channel: channel)
        }
    }

    func handle(value: Value, logger: Logger) async {
        do {
            switch try await value.upgrade.get() {
            case .webSocket:
                return  // The socket's handlers run it from here on.
            case .http(let http1):
                await handleHTTP(asyncChannel: http1, logger: logger)
            case .refused(let http1):
                try await http1.executeThenClose { _, outbound in
                    let head = HTTPResponse(
                        status: .badRequest, headerFields: [.connection: "close", .contentLength: "0"])
                    try await outbound.write(contentsOf: [.head(head), .end(nil)])
                }
            }
        } catch {
            logger.trace("connection ended during its first request: \(error)")
        }
    }

    /// A WebSocket upgrade can only be the first request of a connection (NIO's upgrade handler leaves the
    /// pipeline after it): a later one is redirected to the same path on a new connection.
    private static func redirectingLateUpgrades(
        _ responder: @escaping HTTPChannelHandler.Responder
    ) -> HTTPChannelHandler.Responder {
        struct RedirectedUpgrade: Error {}
        return { request, writer, channel in
            guard request.headers[.upgrade]?.lowercased() == "websocket" else {
                return try await responder(request, writer, channel)
            }
            let target = request.uri.query.map { "\(request.uri.path)?\($0)" } ?? request.uri.path
            try await writer.writeResponse(
                HTTPResponse(status: .temporaryRedirect, headerFields: [.connection: "close", .location: target]))
            throw RedirectedUpgrade()  // Ends the connection.
        }
    }
}

/// The WebSocket handshake of `/ws` (RFC 6455 §4.2): checks the request, answers `Sec-WebSocket-Accept`, and
/// puts NIO's frame decoder and a ``SignalingSocketHandler`` in the pipeline.
struct SignalingUpgrader: NIOTypedHTTPServerProtocolUpgrader {
    typealias UpgradeResult = SignalingChildChannel.Upgrade

    let sockets: SignalingSockets
    let admits: @Sendable (HTTPRequestHead) -> Bool
    /// Called when a request asked for a WebSocket at all (a refused one then gets 400, not the web app).
    let attempted: @Sendable () -> Void

    var supportedProtocol: String { "websocket" }
    var requiredUpgradeHeaders: [String] { [] }

    /// RFC 6455 §1.3.
    private static let magic = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    func buildUpgradeResponse(
        channel: any Channel, upgradeRequest: HTTPRequestHead, initialResponseHeaders: HTTPHeaders
    ) -> EventLoopFuture<HTTPHeaders> {
        attempted()
        let headers = upgradeRequest.headers
        let keys = headers["Sec-WebSocket-Key"]
        guard upgradeRequest.method == .GET, upgradeRequest.uri.split(separator: "?").first == "/ws",
            headers["Sec-WebSocket-Version"] == ["13"], keys.count == 1, let key = keys.first,
            Data(base64Encoded: key)?.count == 16, admits(upgradeRequest)
        else {
            return channel.eventLoop.makeFailedFuture(NIOWebSocketUpgradeError.unsupportedWebSocketTarget)
        }
        let accept = Data(Insecure.SHA1.hash(data: Data((key + Self.magic).utf8))).base64EncodedString()
        var response = initialResponseHeaders
        response.replaceOrAdd(name: "Upgrade", value: "websocket")
        response.replaceOrAdd(name: "Connection", value: "upgrade")
        response.add(name: "Sec-WebSocket-Accept", value: accept)
        return channel.eventLoop.makeSucceededFuture(response)
    }

    func upgrade(channel: any Channel, upgradeRequest: HTTPRequestHead) -> EventLoopFuture<UpgradeResult> {
        channel.eventLoop.makeCompletedFuture {
            let operations = channel.pipeline.syncOperations
            try operations.addHandler(ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: sockets.readLimit)))
            let socket = SignalingSocket(channel: channel, sockets: sockets)
            try operations.addHandler(SignalingSocketHandler(socket: socket, readLimit: sockets.readLimit))
            return .webSocket
        }
    }
}
