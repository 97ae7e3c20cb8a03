public import ControlTransport
public import DeviceIdentity
public import NIOCore
public import NIOPosix

/// The monitor's QUIC endpoint: listens on UDP (all interfaces, IPv4 and IPv6 by default) and yields each
/// connection whose handshake completed — with a client certificate, whose fingerprint the session then uses to
/// decide trust (PROTOCOL.md §2).
public final class QUICListener: ControlListener {
    public let port: Int
    public let connections: AsyncStream<any ControlConnection>
    private let endpoint: NIOLoopBound<ServerEndpoint>

    private init(port: Int, connections: AsyncStream<any ControlConnection>, endpoint: NIOLoopBound<ServerEndpoint>) {
        self.port = port
        self.connections = connections
        self.endpoint = endpoint
    }

    /// Binds and starts listening.
    /// - Parameters:
    ///   - host: The address to bind; `::` (default) takes IPv6 and IPv4 on every interface.
    ///   - port: The UDP port (PROTOCOL.md: 48080); 0 picks a free one (see `port`).
    ///   - identity: The monitor's device identity, presented in every handshake.
    ///   - configuration: Transport settings.
    ///   - group: The event loops to use.
    /// - Throws: `ControlTransportError.invalidAddress` if the address cannot be bound.
    public static func bind(
        host: String = "::",
        port: Int,
        identity: DeviceIdentity,
        configuration: QUICConfiguration = QUICConfiguration(),
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> QUICListener {
        let credentials: TLSCredentials
        do {
            credentials = try TLSCredentials(identity: identity)
        } catch {
            throw ControlTransportError.handshakeFailed("\(error)")
        }
        let (connections, continuation) = AsyncStream.makeStream(of: (any ControlConnection).self)
        // No SO_REUSEADDR: for UDP it would let a second monitor bind the same port (and port 0 pick one already
        // taken), silently splitting the packets between two servers with different certificates.
        let bootstrap = DatagramBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let endpoint = ServerEndpoint(
                        channel: channel, configuration: configuration, credentials: credentials,
                        accepted: continuation)
                    try channel.pipeline.syncOperations.addHandler(DatagramHandler(endpoint))
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.bind(host: host, port: port).get()
        } catch {
            continuation.finish()
            throw ControlTransportError.invalidAddress("cannot listen on [\(host)]:\(port): \(error)")
        }
        let server = try await channel.eventLoop.submit {
            let endpoint = try channel.pipeline.syncOperations.handler(type: DatagramHandler<ServerEndpoint>.self)
                .endpoint
            endpoint.boundAddress = channel.localAddress
            return NIOLoopBound(endpoint, eventLoop: channel.eventLoop)
        }.get()
        return QUICListener(port: channel.localAddress?.port ?? port, connections: connections, endpoint: server)
    }

    /// What admission has done so far (``QUICAdmission``): Retries sent, clients refused or closed.
    public func admissionStatistics() async -> QUICAdmissionStatistics {
        let endpoint = self.endpoint
        return (try? await endpoint.eventLoop.submit { endpoint.value.admissionStatistics }.get())
            ?? QUICAdmissionStatistics()
    }

    /// Closes the socket the way NIO does after a fatal send error (e.g. ENETUNREACH while the network is down),
    /// without shutting down: the endpoint must reopen it and keep its connections. For tests.
    func closeSocketUnderneath() async {
        let endpoint = self.endpoint
        _ = try? await endpoint.eventLoop.flatSubmit { endpoint.value.channel.close() }.get()
    }

    public func shutdown() async {
        let endpoint = self.endpoint
        _ = try? await endpoint.eventLoop.flatSubmit { endpoint.value.shutdown() }.get()
        // The endpoint's current socket: it may have been reopened since `bind`.
        _ = try? await endpoint.eventLoop.flatSubmit { endpoint.value.channel.close() }.get()
    }
}
