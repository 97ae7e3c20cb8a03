import ControlTransport
import CribCallControl
import CribCallProtocol
import DeviceIdentity
import Foundation
import QUIC
import Testing

/// PROTOCOL.md §4 over real QUIC, Swift client ↔ Swift monitor running ControlSession: each case checks the exact
/// ERROR frame and the application close code the client observes.
@Suite("ControlSession over QUIC: the exact ERROR frame and close code for each error case")
struct QUICControlSessionTests {
    let monitor: DeviceIdentity
    let listener: DeviceIdentity

    init() throws {
        monitor = try DeviceIdentity.generate(now: Date())
        listener = try DeviceIdentity.generate(now: Date())
    }

    /// Starts a monitor trusting `trusted` (or nobody), connects the listener, runs `body`, shuts down.
    func withSession(
        trusting trusted: Bool,
        _ body: (any ControlConnection) async throws -> Void
    ) async throws {
        let quic = try await QUICListener.bind(host: "127.0.0.1", port: 0, identity: monitor)
        let client = listener.fingerprint
        let server = Task {
            for await connection in quic.connections {
                let session = ControlSession(connection: connection, role: .monitor) {
                    trusted && connection.peer.fingerprint == client ? .trusted : .untrusted
                }
                _ = await session.run { message in
                    if case .ping(let ping) = message { return [.send(.pong(ping))] }
                    return []
                }
            }
        }
        let connection = try await QUICConnector(identity: listener)
            .connect(host: "127.0.0.1", port: quic.port, pinnedFingerprint: monitor.fingerprint)
        try await body(connection)
        await connection.close(code: 0)
        await quic.shutdown()
        server.cancel()
    }

    @Test(
        "error cases",
        arguments: [
            (
                "unknown client PING", false, #"{"timestamp":1,"type":"PING"}"#, ErrorCode.unauthorized,
                "PING" as String?, true
            ),
            ("unknown client, unknown type", false, #"{"type":"NOPE"}"#, .unsupportedMessage, "NOPE", true),
            ("invalid JSON", true, "{oops", .protocolError, nil, true),
            ("no type", true, #"{"timestamp":1}"#, .protocolError, nil, true),
            ("not an object", true, "[1]", .protocolError, nil, true),
            ("trusted, unknown type stays open", true, #"{"type":"NOPE"}"#, .unsupportedMessage, "NOPE", false),
        ] as [(String, Bool, String, ErrorCode, String?, Bool)])
    func errorCase(name: String, trusted: Bool, payload: String, code: ErrorCode, inReplyTo: String?, closes: Bool)
        async throws
    {
        try await withSession(trusting: trusted) { connection in
            try await connection.send(Array(payload.utf8))
            var frames = connection.inbound.makeAsyncIterator()
            let frame = try #require(try await frames.next(), "\(name): no ERROR frame")
            guard case .error(let error) = try ControlMessageCodec.decode(payload: frame) else {
                Issue.record("\(name): expected ERROR")
                return
            }
            #expect(error.code == code.rawValue && error.error == code.name && error.inReplyTo == inReplyTo)
            #expect(!error.message.isEmpty)
            if closes {
                #expect(try await frames.next() == nil)
                #expect(await connection.closed() == .peerApplication(code: UInt64(code.rawValue), reason: ""))
            } else {
                try await connection.send(.ping(Ping(timestamp: 9)))
                let reply = try await frames.next().map { try ControlMessageCodec.decode(payload: $0) }
                #expect(reply == .pong(Ping(timestamp: 9)), "\(name): the session must stay open")
            }
        }
    }

    @Test("a frame over 262,144 bytes is refused before it is sent")
    func oversizeFrame() async throws {
        try await withSession(trusting: true) { connection in
            await #expect(throws: ControlProtocolError.self) {
                try await connection.send([UInt8](repeating: 0x20, count: ControlFrame.maxPayloadLength + 1))
            }
            let maximum =
                Array(#"{"timestamp":3,"type":"PING","pad":""#.utf8)
                + [UInt8](repeating: 0x61, count: ControlFrame.maxPayloadLength - 40) + Array(#""}"#.utf8)
            try await connection.send(maximum)
            var frames = connection.inbound.makeAsyncIterator()
            let reply = try await frames.next().map { try ControlMessageCodec.decode(payload: $0) }
            #expect(reply == .pong(Ping(timestamp: 3)), "a large frame within the limit goes through")
        }
    }
}
