import BeMyEarsCore
import Foundation
import Synchronization

/// Records what a hub asks the server to do. Sent envelopes are stored as the encoded text a socket would carry,
/// so every test also exercises the encoder and decoder on every server message.
final class RecordingOutbound: SignalingOutbound {
    struct Forward: Sendable {
        var text: String
        var session: SessionID
        var node: NodeID
    }

    /// What goes over the ordered channel between nodes.
    enum BusItem: Sendable {
        case forward(Forward)
        case presenceChanged
    }

    private struct State {
        var sent: [SessionID: [String]] = [:]
        var cursors: [SessionID: Int] = [:]
        var closes: [SessionID: CloseCode] = [:]
        var forwards: [Forward] = []
        var bus: [BusItem] = []
        var presencePublications = 0
        var wakes: [Date] = []
        var logs: [SignalingLogRecord] = []
        /// Every send, close and forward in order, as one line each (for ordering checks across sessions).
        var transcript: [String] = []
    }

    private let state = Mutex(State())

    func send(_ envelope: Envelope, to session: SessionID) {
        let text = EnvelopeCodec.encode(envelope)
        state.withLock {
            $0.sent[session, default: []].append(text)
            $0.transcript.append("send \(session) \(text)")
        }
    }

    func close(_ session: SessionID, code: CloseCode) {
        state.withLock {
            $0.closes[session] = code
            $0.transcript.append("close \(session) \(code)")
        }
    }

    func forward(_ envelope: Envelope, to session: SessionID, on node: NodeID) {
        let text = EnvelopeCodec.encode(envelope)
        state.withLock {
            $0.forwards.append(Forward(text: text, session: session, node: node))
            $0.bus.append(.forward(Forward(text: text, session: session, node: node)))
            $0.transcript.append("forward \(node) \(session) \(text)")
        }
    }

    func publishPresenceChange() {
        state.withLock {
            $0.presencePublications += 1
            $0.bus.append(.presenceChanged)
            $0.transcript.append("publish presence")
        }
    }

    func wake(at time: Date) {
        state.withLock { $0.wakes.append(time) }
    }

    /// The wake-ups the hub asked for, in order.
    var wakes: [Date] { state.withLock { $0.wakes } }

    func log(_ record: SignalingLogRecord) {
        state.withLock { $0.logs.append(record) }
    }

    /// Everything sent to a session so far, decoded.
    func allMessages(to session: SessionID) throws -> [Envelope] {
        try state.withLock { $0.sent[session] ?? [] }.map { try EnvelopeCodec.decode($0) }
    }

    /// What was sent to a session since the last call, decoded.
    func newMessages(to session: SessionID) throws -> [Envelope] {
        let texts = state.withLock { state -> [String] in
            let all = state.sent[session] ?? []
            let cursor = state.cursors[session] ?? 0
            state.cursors[session] = all.count
            return Array(all[cursor...])
        }
        return try texts.map { try EnvelopeCodec.decode($0) }
    }

    /// The raw texts sent to a session.
    func texts(to session: SessionID) -> [String] {
        state.withLock { $0.sent[session] ?? [] }
    }

    func closeCode(of session: SessionID) -> CloseCode? {
        state.withLock { $0.closes[session] }
    }

    /// Removes and returns the forwards made so far.
    func takeForwards() -> [Forward] {
        state.withLock { state in
            defer { state.forwards.removeAll() }
            return state.forwards
        }
    }

    /// Removes and returns what was put on the inter-node channel so far, in order.
    func takeBus() -> [BusItem] {
        state.withLock { state in
            defer { state.bus.removeAll() }
            return state.bus
        }
    }

    /// Removes and returns the number of presence publications so far.
    func takePresencePublications() -> Int {
        state.withLock { state in
            defer { state.presencePublications = 0 }
            return state.presencePublications
        }
    }

    var logs: [SignalingLogRecord] { state.withLock { $0.logs } }

    var transcript: [String] { state.withLock { $0.transcript } }
}
