public import CanonicalJSON
public import Foundation
import NIOCore
import NIOPosix
public import ServiceLifecycle
import Synchronization

/// A daemon's control socket: a Unix-domain stream socket in a private directory, one JSON request per connection
/// (a line), answered by one or more JSON lines (several for a subscription such as a live status), then closed.
///
/// Access is the file system's: the socket is created 0600 inside the caller's own directory (0700), so only the
/// user who runs the daemon can connect. Requests are bounded (``ControlSocket/maxRequestBytes``), connections too
/// (``ControlSocket/maxConnections``), and an unparsable request gets an error line instead of a silent close.
public final class ControlSocketServer: Service, Sendable {
    /// Answers one request: the lines to send back, in order; the connection closes when the sequence ends (or when
    /// the client goes away, which cancels the iteration).
    public typealias Handler = @Sendable (JSONValue) -> AsyncStream<JSONValue>

    public let path: String
    private let channel: NIOAsyncChannel<NIOAsyncChannel<ByteBuffer, ByteBuffer>, Never>
    private let serving: Task<Void, Never>

    /// Binds `path` and serves until ``close()``.
    ///
    /// A socket file left by a daemon that died is replaced; a live one (something answers on it) is not.
    /// - Throws: ``ControlSocketError`` with ``ControlSocketError/Code/alreadyRunning`` when another process serves
    ///   `path`, ``ControlSocketError/Code/unavailable`` when it cannot be bound.
    public static func start(path: String, handler: @escaping Handler) async throws -> ControlSocketServer {
        try ControlSocket.checkPath(path)
        if FileManager.default.fileExists(atPath: path) {
            if await ControlSocketClient.isAnswering(path: path) {
                throw ControlSocketError(.alreadyRunning, "Another process is already serving \(path).")
            }
            try? FileManager.default.removeItem(atPath: path)
        }
        let channel: NIOAsyncChannel<NIOAsyncChannel<ByteBuffer, ByteBuffer>, Never>
        do {
            channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(.backlog, value: 64)
                .bind(unixDomainSocketPath: path, cleanupExistingSocketFile: false) { child in
                    child.eventLoop.makeCompletedFuture {
                        try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: child)
                    }
                }
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        } catch {
            throw ControlSocketError(.unavailable, "The control socket \(path) cannot be bound: \(error)")
        }
        return ControlSocketServer(path: path, channel: channel, handler: handler)
    }

    private init(
        path: String, channel: NIOAsyncChannel<NIOAsyncChannel<ByteBuffer, ByteBuffer>, Never>,
        handler: @escaping Handler
    ) {
        self.path = path
        self.channel = channel
        serving = Task {
            try? await channel.executeThenClose { inbound in
                let active = ActiveConnections()
                try await withThrowingDiscardingTaskGroup { group in
                    for try await connection in inbound {
                        // Past the limit a connection is closed at once; the client sees it end without an answer.
                        guard active.enter() else {
                            try? await connection.channel.close()
                            continue
                        }
                        group.addTask {
                            await Self.serve(connection, handler: handler)
                            active.leave()
                        }
                    }
                }
            }
        }
    }

    /// Stops accepting, ends the connections and removes the socket file.
    /// As a swift-service-lifecycle `Service`: serves (it does from ``start(path:handler:)`` on) until the group's
    /// graceful shutdown, then closes.
    public func run() async {
        try? await gracefulShutdown()
        await close()
    }

    public func close() async {
        serving.cancel()
        try? await channel.channel.close()
        _ = await serving.result
        try? FileManager.default.removeItem(atPath: path)
    }

    private static func serve(_ connection: NIOAsyncChannel<ByteBuffer, ByteBuffer>, handler: Handler) async {
        try? await connection.executeThenClose { inbound, outbound in
            var reader = LineReader(limit: ControlSocket.maxRequestBytes)
            var request: JSONValue?
            do {
                read: for try await buffer in inbound {
                    for line in try reader.feed(buffer) {
                        request = try JSONParser(limits: .init(maxDepth: 32, maxBytes: ControlSocket.maxRequestBytes))
                            .parse(line)
                        break read
                    }
                }
            } catch {
                let message = (error as? ControlSocketError)?.message ?? "the request is not JSON: \(error)"
                try await outbound.write(ControlSocket.line(["error": .string(message)]))
                return
            }
            guard let request else { return }
            for await response in handler(request) {
                try await outbound.write(ControlSocket.line(response))
            }
        }
    }
}

/// How many connections are being served.
private final class ActiveConnections: Sendable {
    private let count = Atomic<Int>(0)

    /// Takes a place, unless all ``ControlSocket/maxConnections`` are taken.
    func enter() -> Bool {
        guard count.add(1, ordering: .relaxed).newValue <= ControlSocket.maxConnections else {
            count.subtract(1, ordering: .relaxed)
            return false
        }
        return true
    }

    func leave() {
        count.subtract(1, ordering: .relaxed)
    }
}

/// Splits a byte stream into lines (without the `\n`), refusing a line longer than `limit`.
struct LineReader {
    let limit: Int
    private var pending: [UInt8] = []

    init(limit: Int) {
        self.limit = limit
    }

    mutating func feed(_ buffer: ByteBuffer) throws(ControlSocketError) -> [[UInt8]] {
        pending += buffer.readableBytesView
        var lines: [[UInt8]] = []
        while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
            lines.append(Array(pending[..<newline]))
            pending.removeSubrange(...newline)
        }
        guard pending.count <= limit, lines.allSatisfy({ $0.count <= limit }) else {
            throw ControlSocketError(.invalidMessage, "a line is longer than \(limit) bytes")
        }
        return lines
    }
}
