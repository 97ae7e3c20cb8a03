import NIOCore

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
