import BenchmarkSupport
import NIOCore
import NIOPosix
import Synchronization

/// A TCP relay on a loopback port in front of the server that notes when each `HTTP/1.1 201` answer passes on
/// its way back to the client (CLOCK_MONOTONIC, as ``monotonicNanoseconds()``): the moment a client learns its
/// upload is stored, seen from outside both programs.
final class ResponseWatch: Sendable {
    private let target: Int
    private let createdAt = Mutex<[Int64]>([])
    private let server: Mutex<(any Channel)?> = Mutex(nil)

    /// A relay to 127.0.0.1:`target`.
    init(target: Int) {
        self.target = target
    }

    /// When each 201 passed, in order.
    var created: [Int64] { createdAt.withLock { $0 } }

    /// Starts relaying; returns the relay's port.
    func start() async throws -> Int {
        let target = target
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { client in
                client.setOption(.autoRead, value: false).flatMap {
                    ClientBootstrap(group: client.eventLoop)
                        .channelInitializer { upstream in
                            upstream.pipeline.addHandler(Forward(to: client, watch: self))
                        }
                        .connect(host: "127.0.0.1", port: target)
                }.flatMap { upstream in
                    client.pipeline.addHandler(Forward(to: upstream, watch: nil)).flatMap {
                        client.setOption(.autoRead, value: true)
                    }
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        server.withLock { $0 = channel }
        return channel.localAddress?.port ?? 0
    }

    func stop() async {
        try? await server.withLock { $0 }?.close()
    }

    fileprivate func sawAnswer(_ buffer: ByteBuffer) {
        // An answer's status line starts a read on a connection that is idle between uploads.
        guard buffer.readableBytesView.starts(with: Array("HTTP/1.1 201".utf8)) else { return }
        let now = monotonicNanoseconds()
        createdAt.withLock { $0.append(now) }
    }
}

/// Copies what one side reads to the other side; closes both together.
private final class Forward: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer

    private let peer: any Channel
    private let watch: ResponseWatch?

    init(to peer: any Channel, watch: ResponseWatch?) {
        self.peer = peer
        self.watch = watch
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        watch?.sawAnswer(buffer)
        peer.writeAndFlush(buffer, promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        peer.close(promise: nil)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
