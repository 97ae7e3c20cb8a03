import NIOCore
import NIOPosix

/// A loopback TCP port nobody listens on (bound, then released): where a server "down" is, until it starts.
public enum FreePort {
    public static func take() async throws -> Int {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0).get()
        let port = channel.localAddress!.port!
        try await channel.close()
        return port
    }
}
