import ControlTransport
import CribCallProtocol
import Synchronization

/// The monitor's side of its connections, wrapped so a test can hold back the frames of one message type until it
/// says so — an answer that is slow to leave, as on a loaded machine — and see what is sent meanwhile.
final class HeldReplies: Sendable {
    private struct State {
        var released = false
        var holding = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
        var sent: [ControlMessageType] = []
    }

    /// The message type held back, e.g. `.pairAccepted`.
    let type: ControlMessageType
    private let state = Mutex(State())

    init(_ type: ControlMessageType) {
        self.type = type
    }

    /// `listener` whose connections hold back `type`.
    func wrap(_ listener: any ControlListener) -> any ControlListener {
        HeldListener(inner: listener, held: self)
    }

    /// Whether a message of the held type is waiting to be sent.
    var isHolding: Bool { state.withLock { $0.holding > 0 } }

    /// The types sent so far (held ones once released), in order.
    var sent: [ControlMessageType] { state.withLock { $0.sent } }

    /// Lets the held messages (and any later ones) go.
    func release() {
        let waiters = state.withLock { state in
            state.released = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    fileprivate func send(_ payload: [UInt8], on connection: any ControlConnection) async throws {
        let message = try? ControlMessageCodec.decode(payload: payload)
        if message?.type == type {
            await withCheckedContinuation { waiter in
                let go = state.withLock { state in
                    if state.released { return true }
                    state.holding += 1
                    state.waiters.append(waiter)
                    return false
                }
                if go { waiter.resume() }
            }
        }
        if let sentType = message?.type { state.withLock { $0.sent.append(sentType) } }
        try await connection.send(payload)
    }
}

private struct HeldListener: ControlListener {
    let inner: any ControlListener
    let held: HeldReplies

    var port: Int { inner.port }

    var connections: AsyncStream<any ControlConnection> {
        let held = held
        return AsyncStream { continuation in
            let task = Task {
                for await connection in inner.connections {
                    continuation.yield(HeldConnection(inner: connection, held: held))
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    func shutdown() async { await inner.shutdown() }
}

private struct HeldConnection: ControlConnection {
    let inner: any ControlConnection
    let held: HeldReplies

    var peer: PeerCertificate { inner.peer }
    var remoteAddress: String { inner.remoteAddress }
    var inbound: ControlFrameSequence { inner.inbound }

    func send(_ payload: [UInt8]) async throws { try await held.send(payload, on: inner) }
    func close(code: UInt64) async { await inner.close(code: code) }
    func closed() async -> ConnectionCloseReason { await inner.closed() }
}
