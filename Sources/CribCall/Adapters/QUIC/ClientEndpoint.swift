import ControlTransport
import NIOCore

/// The listener app's side of one connection's UDP socket. Confined to the socket's event loop; closes the
/// socket when its connection is finished.
final class ClientEndpoint: ReopeningDatagramEndpoint {
    var channel: any Channel
    var boundAddress: SocketAddress?
    var connection: QUICConnectionCore?

    init(channel: any Channel) {
        self.channel = channel
    }

    func receive(_ envelope: AddressedEnvelope<ByteBuffer>) {
        guard let connection, envelope.remoteAddress == connection.remote.address else { return }
        envelope.data.withUnsafeReadableBytes { connection.receive($0, from: envelope.remoteAddress) }
    }

    /// The socket serves one connection; after it finished, the endpoint closes the socket itself.
    var wantsSocket: Bool { connection != nil }

    func socketClosed() {
        // Closed under us (e.g. the network went down): the connection carries on once the socket is back.
        if wantsSocket { reopenSocket() }
    }

    func register(cid: [UInt8], for connection: QUICConnectionCore) {}

    func unregister(cid: [UInt8]) {}

    func established(_ connection: QUICConnectionCore) {}

    func finished(_ connection: QUICConnectionCore) {
        self.connection = nil
        channel.close(promise: nil)
    }
}
