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
    private let armedLosses = Mutex<[[UInt8]]>([])
    private let connections = Mutex(0)
    private let forwarded = Atomic<Int>(0)
    private let rate = Atomic<Int>(0)
    private let target: Int

    /// A proxy to 127.0.0.1:`target`.
    public init(target: Int) {
        self.target = target
    }

    /// The next connection gets `fault`.
    public func inject(_ fault: Fault) {
        faults.withLock { $0.append(fault) }
    }

    /// The answer to the next request that starts with `prefix` (e.g. `"PATCH "`), on whichever connection it
    /// comes, is lost: the proxy closes that connection as soon as the server starts answering it. For a request
    /// that follows others on a kept-alive connection, where ``Fault/dropResponse`` would lose the first answer.
    public func loseAnswer(toRequestStartingWith prefix: String) {
        armedLosses.withLock { $0.append(Array(prefix.utf8)) }
    }

    /// A slow link: from now on, what clients send reaches the server at about `bytesPerSecond` (0: at once).
    public func throttle(bytesPerSecond: Int) {
        rate.store(bytesPerSecond, ordering: .relaxed)
    }

    /// Bytes of requests forwarded to the server so far, on every connection.
    public var forwardedBytes: Int { forwarded.load(ordering: .relaxed) }

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
                let loseAnswer = Flag(fault == .dropResponse)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        var budget = Int.max
                        if case .cutRequest(let bytes) = fault { budget = bytes }
                        for try await var chunk in clientIn {
                            // A request's head starts a read: the client waits for each answer before the next.
                            if self.disarmLoss(matching: chunk) { loseAnswer.raise() }
                            if chunk.readableBytes >= budget {
                                if budget > 0, let slice = chunk.readSlice(length: budget) {
                                    try await serverOut.write(slice)
                                }
                                return  // the cut: both sides close
                            }
                            budget -= chunk.readableBytes
                            try await self.forward(chunk, to: serverOut)
                        }
                    }
                    group.addTask {
                        for try await chunk in serverIn {
                            if loseAnswer.isRaised { return }  // the answer is lost
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

    /// Writes `chunk` upstream, in slices paced by the throttle when one is set.
    private func forward(_ chunk: ByteBuffer, to server: NIOAsyncChannelOutboundWriter<ByteBuffer>) async throws {
        var chunk = chunk
        while chunk.readableBytes > 0 {
            let rate = rate.load(ordering: .relaxed)
            let slice = chunk.readSlice(length: rate > 0 ? min(chunk.readableBytes, 4_096) : chunk.readableBytes)!
            if rate > 0 { try await Task.sleep(for: .seconds(Double(slice.readableBytes) / Double(rate))) }
            try await server.write(slice)
            forwarded.add(slice.readableBytes, ordering: .relaxed)
        }
    }

    /// Whether `chunk` starts a request whose answer is to be lost (that loss is then used up).
    private func disarmLoss(matching chunk: ByteBuffer) -> Bool {
        armedLosses.withLock { prefixes in
            guard let index = prefixes.firstIndex(where: { chunk.readableBytesView.starts(with: $0) }) else {
                return false
            }
            prefixes.remove(at: index)
            return true
        }
    }
}

/// A flag one task raises and another reads.
private final class Flag: Sendable {
    private let value: Atomic<Bool>

    init(_ raised: Bool) { value = Atomic(raised) }

    func raise() { value.store(true, ordering: .releasing) }

    var isRaised: Bool { value.load(ordering: .acquiring) }
}
