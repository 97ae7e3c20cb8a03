import ControlTransport
import CribCallProtocol
import DeviceIdentity
import Foundation
import Synchronization
import Testing

@testable import CribCallMonitor

/// A monitor's writer to one listener: in order, never more than its limit waiting, replays read as they go.
@Suite("Outbox: ordered, bounded, replays read page by page")
struct OutboxTests {
    /// A connection whose peer never reads: every send waits (as QUIC's flow control makes it) until it closes.
    final class StalledConnection: ControlConnection {
        let peer: PeerCertificate
        let remoteAddress = "stalled"
        let inbound = ControlFrameSequence(InboundFrameQueue())
        private let state = Mutex<(closedWith: UInt64?, waiting: [CheckedContinuation<Void, Never>], sends: Int)>(
            (nil, [], 0))

        init() throws {
            peer = PeerCertificate(identity: try DeviceIdentity.generate(now: Date()))
        }

        var closedWith: UInt64? { state.withLock { $0.closedWith } }
        var sends: Int { state.withLock { $0.sends } }

        func send(_ payload: [UInt8]) async throws {
            await withCheckedContinuation { continuation in
                let closed = state.withLock { state in
                    state.sends += 1
                    if state.closedWith == nil { state.waiting.append(continuation) }
                    return state.closedWith != nil
                }
                if closed { continuation.resume() }
            }
            throw ControlTransportError.closed(.local(code: closedWith ?? 0))
        }

        func close(code: UInt64) async {
            let waiting = state.withLock { state in
                if state.closedWith == nil { state.closedWith = code }
                defer { state.waiting = [] }
                return state.waiting
            }
            for continuation in waiting { continuation.resume() }
        }

        func closed() async -> ConnectionCloseReason { .local(code: closedWith ?? 0) }
    }

    @Test("a listener that stops reading is closed once the limit is reached, not allowed to grow the queue")
    func bounded() async throws {
        let connection = try StalledConnection()
        let outbox = Outbox(connection: connection)
        for index in 0..<(Outbox.limit + 200) { outbox.send(.pong(Ping(timestamp: Int64(index)))) }
        let deadline = ContinuousClock.now + .seconds(10)
        while connection.closedWith == nil, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(connection.closedWith == UInt64(ErrorCode.internalError.rawValue))
        // After the close everything waiting is dropped at once (each send fails), and nothing more is taken.
        try await Task.sleep(for: .milliseconds(100))
        #expect(connection.sends <= Outbox.limit + 1, "\(connection.sends) sends")
        outbox.send(.pong(Ping(timestamp: -1)))
        outbox.finish()
    }

    @Test("a replay is one entry: its pages are read when its turn comes, and what follows it is sent after it")
    func replayInOrder() async throws {
        let identity = try DeviceIdentity.generate(now: Date())
        let (client, server) = InMemoryControlTransport.pair(
            client: PeerCertificate(identity: identity), server: PeerCertificate(identity: identity))
        let outbox = Outbox(connection: server)
        let reads = Mutex(0)
        outbox.send(.pong(Ping(timestamp: 0)))
        outbox.replay(after: 0) { cursor in
            reads.withLock { $0 += 1 }
            guard cursor < 6 else { return ([], cursor) }
            let page = (cursor + 1...cursor + 2).map { ControlMessage.pong(Ping(timestamp: $0)) }
            return (page, cursor + 2)
        }
        outbox.send(.pong(Ping(timestamp: 100)))
        var frames = client.inbound.makeAsyncIterator()
        var seen: [Int64] = []
        while seen.count < 8, let frame = try await frames.next() {
            if case .pong(let ping) = try ControlMessageCodec.decode(payload: frame) { seen.append(ping.timestamp) }
        }
        #expect(seen == [0, 1, 2, 3, 4, 5, 6, 100])
        #expect(reads.withLock { $0 } == 4, "three pages and the empty one that ends the replay")
        outbox.finish()
    }
}
