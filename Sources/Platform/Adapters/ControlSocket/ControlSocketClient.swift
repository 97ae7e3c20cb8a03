public import CanonicalJSON
import NIOCore
import NIOPosix

/// Talks to a ``ControlSocketServer``: sends one request and reads the answer lines.
public enum ControlSocketClient {
    /// Sends `request` and yields each answer line until the server closes the connection.
    ///
    /// - Throws: ``ControlSocketError`` with ``ControlSocketError/Code/notRunning`` when nothing serves `path` (no
    ///   socket file, or a stale one), ``ControlSocketError/Code/invalidMessage`` for an answer that is not JSON.
    public static func request(path: String, _ request: JSONValue) -> AsyncThrowingStream<JSONValue, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    let connection = try await connect(path: path)
                    try await connection.executeThenClose { inbound, outbound in
                        try await outbound.write(ControlSocket.line(request))
                        var reader = LineReader(limit: ControlSocket.maxAnswerBytes)
                        for try await buffer in inbound {
                            for line in try reader.feed(buffer) {
                                let value: JSONValue
                                do {
                                    value = try JSONParser().parse(line)
                                } catch {
                                    throw ControlSocketError(
                                        .invalidMessage, "the daemon's answer is not JSON: \(error)")
                                }
                                continuation.yield(value)
                            }
                        }
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Sends `request` and returns the first answer line.
    public static func ask(path: String, _ request: JSONValue) async throws -> JSONValue {
        for try await answer in Self.request(path: path, request) { return answer }
        throw ControlSocketError(.invalidMessage, "the daemon closed the connection without an answer")
    }

    /// Whether something accepts connections on `path`.
    static func isAnswering(path: String) async -> Bool {
        guard let connection = try? await connect(path: path) else { return false }
        try? await connection.channel.close()
        return true
    }

    private static func connect(path: String) async throws -> NIOAsyncChannel<ByteBuffer, ByteBuffer> {
        try ControlSocket.checkPath(path)
        do {
            return try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(unixDomainSocketPath: path) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            throw ControlSocketError(.notRunning, "Nothing answers on \(path) (\(error)).")
        }
    }
}
