import BeMyEarsCore
import CanonicalJSON
import Foundation
import TestSupport

/// One WebSocket session of a ``TestNode``, seen from the client.
struct TestClient: Sendable {
    let id: SessionID
    let node: TestNode

    func send(_ type: MessageType, callId: CallID? = nil, to: String? = nil, payload: JSONValue? = nil) async {
        await node.hub.receive(
            EnvelopeCodec.encode(Envelope(type: type, callId: callId?.rawValue, to: to, payload: payload)),
            from: id
        )
    }

    func disconnect() async {
        await node.hub.disconnect(id)
    }

    /// Takes new messages one by one until `done` holds for what was taken, and returns them; later messages stay
    /// for the next call.
    /// - Throws: When `done` does not hold within `timeout` (the error lists what arrived).
    func receive(
        timeout: Duration = .seconds(20),
        until done: ([Envelope]) -> Bool
    ) async throws -> [Envelope] {
        var taken: [Envelope] = []
        let deadline = ContinuousClock.now + timeout
        while !done(taken) {
            if let text = node.outbound.takeNew(to: id, limit: 1).first {
                taken.append(try EnvelopeCodec.decode(text, maximumBytes: 1 << 20))
                continue
            }
            guard ContinuousClock.now < deadline else {
                throw MissingValue(description: "timed out; received only \(taken.map(\.type))")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        return taken
    }

    /// The next `count` messages.
    func receive(count: Int, timeout: Duration = .seconds(20)) async throws -> [Envelope] {
        try await receive(timeout: timeout) { $0.count >= count }
    }

    /// Messages up to and including the first that satisfies `last`.
    func receive(
        through last: @escaping (Envelope) -> Bool,
        timeout: Duration = .seconds(20)
    ) async throws -> [Envelope] {
        try await receive(timeout: timeout) { taken in taken.last.map(last) ?? false }
    }

    /// Whatever arrives within `duration` (for "nothing more comes" checks).
    func drain(for duration: Duration = .milliseconds(400)) async throws -> [Envelope] {
        try await Task.sleep(for: duration)
        return try node.outbound.takeNew(to: id).map { try EnvelopeCodec.decode($0, maximumBytes: 1 << 20) }
    }
}

extension Envelope {
    /// The usernames listed by a PRESENCE.
    var presenceNames: [String]? {
        guard type == .presence else { return nil }
        return payload?["interpreters"]?.arrayValue?.compactMap { $0["username"]?.stringValue }
    }
}
