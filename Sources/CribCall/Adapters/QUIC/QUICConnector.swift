public import ControlTransport
public import DeviceIdentity
public import NIOCore
public import NIOPosix

/// The listener app's QUIC endpoint: opens control connections to monitors, pinning each monitor's certificate
/// fingerprint inside the handshake (PROTOCOL.md §2). Each connection has its own UDP socket.
public struct QUICConnector: ControlConnector {
    private let credentials: TLSCredentials
    private let configuration: QUICConfiguration
    private let group: any EventLoopGroup

    /// - Parameters:
    ///   - identity: This device's identity, presented as the client certificate.
    ///   - configuration: Transport settings.
    ///   - group: The event loops to use.
    /// - Throws: `ControlTransportError.handshakeFailed` if TLS cannot use the identity.
    public init(
        identity: DeviceIdentity,
        configuration: QUICConfiguration = QUICConfiguration(),
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) throws {
        do {
            credentials = try TLSCredentials(identity: identity)
        } catch {
            throw ControlTransportError.handshakeFailed("\(error)")
        }
        self.configuration = configuration
        self.group = group
    }

    public func connect(
        host: String,
        port: Int,
        pinnedFingerprint: CertificateFingerprint
    ) async throws -> any ControlConnection {
        let remoteAddress: SocketAddress
        do {
            remoteAddress = try SocketAddress.makeAddressResolvingHost(host, port: port)
        } catch {
            throw ControlTransportError.invalidAddress("cannot resolve \(host): \(error)")
        }
        let wildcard = remoteAddress.protocol == .inet6 ? "::" : "0.0.0.0"
        let channel: any Channel
        do {
            channel = try await DatagramBootstrap(group: group)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            DatagramHandler(ClientEndpoint(channel: channel)))
                    }
                }
                .bind(host: wildcard, port: 0).get()
        } catch {
            throw ControlTransportError.invalidAddress("cannot open a UDP socket: \(error)")
        }
        let credentials = self.credentials
        let configuration = self.configuration
        do {
            return try await channel.eventLoop.flatSubmit { () -> EventLoopFuture<any ControlConnection> in
                do {
                    let endpoint = try channel.pipeline.syncOperations
                        .handler(type: DatagramHandler<ClientEndpoint>.self).endpoint
                    guard let localAddress = channel.localAddress else {
                        throw ControlTransportError.invalidAddress("the UDP socket has no local address")
                    }
                    endpoint.boundAddress = localAddress
                    let core = try QUICConnectionCore.connect(
                        endpoint: endpoint, eventLoop: channel.eventLoop, configuration: configuration,
                        credentials: credentials, local: try SocketAddressStorage(localAddress),
                        remote: try SocketAddressStorage(remoteAddress), pinnedFingerprint: pinnedFingerprint)
                    endpoint.connection = core
                    core.writeOut()
                    return core.handshake.futureResult.assumeIsolated().flatMapThrowing { () -> any ControlConnection in
                        guard let peer = core.peer else {
                            throw ControlTransportError.handshakeFailed("no server certificate")
                        }
                        return QUICControlConnection(core, peer: peer)
                    }.nonisolated()
                } catch {
                    return channel.eventLoop.makeFailedFuture(error)
                }
            }.get()
        } catch let error as ControlTransportError {
            try? await channel.close()
            throw error
        } catch {
            try? await channel.close()
            throw ControlTransportError.handshakeFailed("\(error)")
        }
    }
}
