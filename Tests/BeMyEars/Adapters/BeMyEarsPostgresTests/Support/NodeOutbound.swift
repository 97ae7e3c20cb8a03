import BeMyEarsCore
import BeMyEarsPostgres
import Foundation
import Synchronization
import Testing

/// A node's outbound as a WebSocket server would implement it: local sends are recorded (as the text a socket
/// would carry), the cross-node half goes to the PostgreSQL bus.
final class NodeOutbound: SignalingOutbound {
    private struct State {
        var sent: [SessionID: [String]] = [:]
        var cursors: [SessionID: Int] = [:]
        var closes: [SessionID: CloseCode] = [:]
        var logs: [SignalingLogRecord] = []
    }

    let bus: PostgresClusterBus
    private let state = Mutex(State())

    init(bus: PostgresClusterBus) {
        self.bus = bus
    }

    func send(_ envelope: Envelope, to session: SessionID) {
        let text = EnvelopeCodec.encode(envelope)
        state.withLock { $0.sent[session, default: []].append(text) }
    }

    func close(_ session: SessionID, code: CloseCode) {
        state.withLock { $0.closes[session] = code }
    }

    func forward(_ envelope: Envelope, to session: SessionID, on node: NodeID) {
        bus.forward(envelope, to: session, on: node)
    }

    func publishPresenceChange() {
        bus.publishPresenceChange()
    }

    /// The nodes of these tests send every PRESENCE at once (``TestNode`` sets no coalescing interval).
    func wake(at time: Date) {
        Issue.record("a test node asked for a wake-up at \(time): set presenceInterval to zero")
    }

    func log(_ record: SignalingLogRecord) {
        state.withLock { $0.logs.append(record) }
    }

    /// The texts sent to a session since the last call (at most `limit`).
    func takeNew(to session: SessionID, limit: Int = .max) -> [String] {
        state.withLock { state in
            let all = state.sent[session] ?? []
            let cursor = state.cursors[session] ?? 0
            let end = cursor + min(limit, all.count - cursor)
            state.cursors[session] = end
            return Array(all[cursor..<end])
        }
    }

    /// How many texts were sent to a session and not taken yet.
    func pendingCount(to session: SessionID) -> Int {
        state.withLock { ($0.sent[session]?.count ?? 0) - ($0.cursors[session] ?? 0) }
    }

    var logs: [SignalingLogRecord] { state.withLock { $0.logs } }
}
