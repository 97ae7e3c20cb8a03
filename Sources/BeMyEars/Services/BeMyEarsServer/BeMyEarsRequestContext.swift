public import Hummingbird
public import HummingbirdWebSocket
public import NIOCore

/// The request context of the server's routers: Hummingbird's core storage, the WebSocket upgrade slot, and the
/// connection's channel (so a session whose client stopped reading can be cut off).
public struct BeMyEarsRequestContext: RequestContext, WebSocketRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let webSocket: WebSocketHandlerReference<BeMyEarsRequestContext>
    /// The TCP connection the request arrived on.
    public let channel: any Channel

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.webSocket = .init()
        self.channel = source.channel
    }
}
