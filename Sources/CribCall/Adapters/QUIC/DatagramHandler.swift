import NIOCore
import NIOPosix

/// An endpoint that takes the datagrams of its socket.
protocol DatagramReceiving: AnyObject {
    func receive(_ envelope: AddressedEnvelope<ByteBuffer>)
    func socketClosed()
}

/// Owns an endpoint and hands it every received datagram, on the channel's event loop.
final class DatagramHandler<Endpoint: DatagramReceiving>: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>

    let endpoint: Endpoint

    init(_ endpoint: Endpoint) {
        self.endpoint = endpoint
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        endpoint.receive(unwrapInboundIn(data))
    }

    func channelInactive(context: ChannelHandlerContext) {
        endpoint.socketClosed()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // ICMP errors surface as read errors on unconnected UDP sockets; QUIC recovers from lost packets itself.
    }
}

/// An endpoint whose socket is reopened when NIO closes it under its connections.
///
/// NIO treats most send errors on a datagram socket as fatal and closes the channel — among them ENETUNREACH and
/// ENETDOWN, which is what a send gets while the network interface is down (Wi-Fi dropped, cable pulled). Without
/// this, a one-second network blip would end every connection on the socket, and a monitor would stop accepting
/// listeners for good. The socket is opened again on the same event loop and local address, so the connections
/// (confined to that loop, and identified by that address) carry on; QUIC retransmits what was lost meanwhile.
protocol ReopeningDatagramEndpoint: DatagramReceiving, DatagramChannelEndpoint {
    var channel: any Channel { get set }
    /// The address the socket was bound to (kept: a closed channel may no longer report it).
    var boundAddress: SocketAddress? { get }
    /// Whether the endpoint still needs its socket (false once it is shutting down or done).
    var wantsSocket: Bool { get }
}

extension ReopeningDatagramEndpoint {
    /// Opens the socket again after `delay` (on the channel's event loop), retrying every second while the address
    /// cannot be bound and the endpoint still wants a socket.
    func reopenSocket(after delay: TimeAmount = .milliseconds(200)) {
        guard let address = boundAddress else { return }
        let eventLoop = channel.eventLoop
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        eventLoop.assumeIsolated().scheduleTask(in: delay) {
            guard bound.value.wantsSocket else { return }
            DatagramBootstrap(group: eventLoop)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(DatagramHandler(bound.value))
                    }
                }
                .bind(to: address)
                .assumeIsolated()
                .whenComplete { result in
                    switch result {
                    case .success(let channel):
                        if bound.value.wantsSocket {
                            bound.value.channel = channel
                        } else {
                            channel.close(promise: nil)
                        }
                    case .failure:
                        bound.value.reopenSocket(after: .seconds(1))
                    }
                }
        }
    }
}
