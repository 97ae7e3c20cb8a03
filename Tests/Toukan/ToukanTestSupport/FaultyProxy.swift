import NIOCore
import NIOPosix
import Synchronization

/// A TCP proxy on a loopback port in front of a test server, that breaks connections on purpose: the client's
/// view of a flaky network. Each fault applies to one connection, in the order queued; later connections pass
/// through untouched.
public final class FaultyProxy: Sendable {
    public enum Fault: Sendable, Hashable {
        /// Forward this many bytes of the client's request, then close both sides (an upload cut mid-way).
        case cutRequest(afterBytes: Int)
        /// Forward the whole request, but close the client's side as soon as the server starts answering (the
        /// server did the work; its answer is lost).
        case dropResponse
    }

    private let faults = Mutex<[Fault]>([])
    private let connections = Mutex(0)
    private let target: Int

    /// A proxy to 127.0.0.1:`target`.
    public init(target: Int) {
        self.target = target
    }

    /// The next connection gets `fault`.
    public func inject(_ fault: Fault) {
        faults.withLock { $0.append(fault) }
    }

    /// Faults not yet used.
    public var pendingFaults: Int { faults.withLock { $0.count } }
    /// Connections accepted so far.
    public var connectionCount: Int { connections.withLock { $0 } }

    /// Runs the proxy until `body` returns; `body` gets the proxy's port.
    public func run<T: Sendable>(_ body: @escaping @Sendable (Int) async throws -> T) async throws -> T {
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(host: "127.0.0.1", port: 0) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        let port = server.channel.localAddress!.port!
        return try await whileServing(
            {
                try await server.executeThenClose { inbound in
                    try await withThrowingDiscardingTaskGroup { connections in
                        for try await client in inbound {
                            let fault = self.faults.withLock { $0.isEmpty ? nil : $0.removeFirst() }
                            self.connections.withLock { $0 += 1 }
                            connections.addTask { try? await self.relay(client, fault: fault) }
                        }
                    }
                }
            }, { try await body(port) })
    }

    private func relay(_ client: NIOAsyncChannel<ByteBuffer, ByteBuffer>, fault: Fault?) async throws {
        let upstream = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: target) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        try await client.executeThenClose { clientIn, clientOut in
            try await upstream.executeThenClose { serverIn, serverOut in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        var budget = Int.max
                        if case .cutRequest(let bytes) = fault { budget = bytes }
                        for try await var chunk in clientIn {
                            if chunk.readableBytes >= budget {
                                if budget > 0, let slice = chunk.readSlice(length: budget) {
                                    try await serverOut.write(slice)
                                }
                                return  // the cut: both sides close
                            }
                            budget -= chunk.readableBytes
                            try await serverOut.write(chunk)
                        }
                    }
                    group.addTask {
                        for try await chunk in serverIn {
                            if fault == .dropResponse { return }  // the answer is lost
                            try await clientOut.write(chunk)
                        }
                    }
                    // The first side to end ends the connection.
                    try await group.next()
                    group.cancelAll()
                }
            }
        }
    }
}
