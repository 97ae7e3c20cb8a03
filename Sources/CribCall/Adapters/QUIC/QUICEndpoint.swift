import NIOCore

/// What a connection needs from the endpoint that owns its socket. Implemented by the server and client
/// endpoints; called only on their event loop.
protocol QUICEndpoint: AnyObject {
    /// Queues a datagram (flushed by `flush`).
    func send(_ packet: UnsafeRawBufferPointer, to address: SocketAddress)
    /// Flushes queued datagrams.
    func flush()
    /// Routes packets whose destination connection ID is `cid` to `connection`.
    func register(cid: [UInt8], for connection: QUICConnectionCore)
    /// Stops routing `cid`.
    func unregister(cid: [UInt8])
    /// The handshake of `connection` completed and the peer is authenticated.
    func established(_ connection: QUICConnectionCore)
    /// `connection` is gone for good (after its closing or draining period): forget it.
    func finished(_ connection: QUICConnectionCore)
    /// The service trusts the peer of `connection` (a server's admission counts it no longer as a stranger).
    func trusted(_ connection: QUICConnectionCore)
}

extension QUICEndpoint {
    func trusted(_ connection: QUICConnectionCore) {}
}

/// An endpoint writing to a NIO datagram channel: sending and flushing are the same for server and client.
protocol DatagramChannelEndpoint: QUICEndpoint {
    var channel: any Channel { get }
}

extension DatagramChannelEndpoint {
    func send(_ packet: UnsafeRawBufferPointer, to address: SocketAddress) {
        var buffer = channel.allocator.buffer(capacity: packet.count)
        buffer.writeBytes(packet)
        channel.write(AddressedEnvelope(remoteAddress: address, data: buffer), promise: nil)
    }

    func flush() {
        channel.flush()
    }
}

/// A monotonic timestamp in nanoseconds, as ngtcp2 counts time.
func quicTimestamp() -> UInt64 {
    NIODeadline.now().uptimeNanoseconds
}
