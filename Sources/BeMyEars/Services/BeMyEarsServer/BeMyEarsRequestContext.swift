public import Hummingbird
public import NIOCore

/// The request context of the server's HTTP routes (the browser client and `/health`): Hummingbird's core storage
/// and the connection's channel.
public struct BeMyEarsRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The TCP connection the request arrived on.
    public let channel: any Channel

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.channel = source.channel
    }
}
