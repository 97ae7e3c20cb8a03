import ControlTransport
import CribCallControl
import CribCallProtocol
import Testing

/// `ControlSession` enforces PROTOCOL.md §4 on a connection: every error case answers with the exact ERROR frame
/// and closes (or not) with the exact code, before anything reaches a handler.
@Suite("A control session enforces PROTOCOL.md §4")
struct ControlSessionTests {
    /// A malformed frame or payload, and the `inReplyTo` its PROTOCOL_ERROR must carry.
    struct Malformed: Sendable, CustomTestStringConvertible {
        let name: String
        /// Stream bytes, header included.
        let bytes: [UInt8]
        let inReplyTo: String?

        var testDescription: String { name }

        static func framed(_ name: String, _ payload: [UInt8], inReplyTo: String? = nil) -> Malformed {
            let length = UInt32(payload.count)
            let header = [
                UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF),
            ]
            return Malformed(name: name, bytes: header + payload, inReplyTo: inReplyTo)
        }

        static let all: [Malformed] = [
            Malformed(name: "length 0", bytes: [0, 0, 0, 0], inReplyTo: nil),
            Malformed(name: "length 262,145 in the header", bytes: [0x00, 0x04, 0x00, 0x01], inReplyTo: nil),
            framed("invalid UTF-8", Array(#"{"type":"PI"#.utf8) + [0xC3, 0x28] + Array(#"NG","timestamp":1}"#.utf8)),
            framed("invalid JSON", Array(#"{"type":"PING","timestamp":1"#.utf8)),
            framed("a JSON array", Array(#"[{"type":"PING","timestamp":1}]"#.utf8)),
            framed("no type", Array(#"{"timestamp":1}"#.utf8)),
            framed("a type that is not a string", Array(#"{"type":17,"timestamp":1}"#.utf8)),
            framed("PING without timestamp", Array(#"{"type":"PING"}"#.utf8), inReplyTo: "PING"),
        ]
    }

    @Test(
        "a frame that breaks the framing or does not decode gets PROTOCOL_ERROR, then close 1",
        arguments: Malformed.all, [SessionTrust.trusted, .untrusted]
    )
    func malformedFrame(_ malformed: Malformed, trust: SessionTrust) async throws {
        var harness = try SessionHarness(trust: trust)
        try harness.sendRaw(malformed.bytes)
        try await harness.expectError(.protocolError, inReplyTo: malformed.inReplyTo)
        try await harness.expectClosed(with: .protocolError)
        #expect(harness.handled.all.isEmpty)
    }

    @Test(
        "an untrusted client sending a known non-pairing type gets UNAUTHORIZED, then close 2",
        arguments: [Messages.ping, Messages.noiseEvent, Messages.startStream, Messages.error]
    )
    func untrustedKnownType(_ message: ControlMessage) async throws {
        var harness = try SessionHarness(trust: .untrusted)
        try await harness.send(message)
        try await harness.expectError(.unauthorized, inReplyTo: message.typeName)
        try await harness.expectClosed(with: .unauthorized)
        #expect(harness.handled.all.isEmpty)
    }

    @Test("an untrusted client sending an unknown type gets UNSUPPORTED_MESSAGE, then close 3")
    func untrustedUnknownType() async throws {
        var harness = try SessionHarness(trust: .untrusted)
        try await harness.send(json: #"{"type":"LULLABY","song":"brahms"}"#)
        try await harness.expectError(.unsupportedMessage, inReplyTo: "LULLABY")
        try await harness.expectClosed(with: .unsupportedMessage)
        #expect(harness.handled.all.isEmpty)
    }

    @Test("a trusted client sending an unknown type gets UNSUPPORTED_MESSAGE and the session stays open")
    func trustedUnknownType() async throws {
        var harness = try SessionHarness(trust: .trusted)
        try await harness.send(json: #"{"type":"LULLABY","song":"brahms"}"#)
        try await harness.expectError(.unsupportedMessage, inReplyTo: "LULLABY")
        try await harness.expectOpen()
        #expect(harness.handled.all == [.ping(Ping(timestamp: 4_242))])
    }

    @Test(
        "a trusted client sending a type only a monitor sends gets UNSUPPORTED_MESSAGE and the session stays open",
        arguments: [Messages.pinRequired, Messages.noiseEvent]
    )
    func trustedMonitorOnlyType(_ message: ControlMessage) async throws {
        var harness = try SessionHarness(trust: .trusted)
        try await harness.send(message)
        try await harness.expectError(.unsupportedMessage, inReplyTo: message.typeName)
        try await harness.expectOpen()
    }

    @Test("a listener session receiving a type only a listener sends answers UNSUPPORTED_MESSAGE and stays open")
    func listenerReceivesListenerOnlyType() async throws {
        var harness = try SessionHarness(role: .listener, trust: .untrusted)
        try await harness.send(Messages.startStream)
        try await harness.expectError(.unsupportedMessage, inReplyTo: "START_STREAM_REQUEST")
        try await harness.expectOpen()
        #expect(harness.handled.all == [.ping(Ping(timestamp: 4_242))])
    }

    @Test("an untrusted client's PAIR_REQUEST reaches the handler, whose reply is sent")
    func untrustedPairRequestIsHandled() async throws {
        var harness = try SessionHarness(trust: .untrusted)
        try await harness.send(Messages.pairRequest)
        let reply = try #require(try await harness.nextFrame())
        #expect(try ControlMessageCodec.decode(payload: reply) == .pairRejected(PairRejected(reason: .invalidToken)))
        #expect(harness.handled.all == [Messages.pairRequest])
        await harness.client.close(code: 0)
        #expect(await harness.session.value == .peerApplication(code: 0, reason: ""))
    }

    @Test("trust is asked for every message: after revocation the next PING gets UNAUTHORIZED, then close 2")
    func revocationTakesEffectOnTheNextMessage() async throws {
        var harness = try SessionHarness(trust: .trusted)
        try await harness.send(Messages.ping)
        let pong = try await harness.nextFrame().map { try ControlMessageCodec.decode(payload: $0) }
        #expect(pong == .pong(Ping(timestamp: 1)))
        harness.trust.set(.untrusted)
        try await harness.send(Messages.ping)
        try await harness.expectError(.unauthorized, inReplyTo: "PING")
        try await harness.expectClosed(with: .unauthorized)
        #expect(harness.handled.all == [Messages.ping])
    }

    @Test("a handler's close is carried out after the sends before it, and nothing after it is sent")
    func handlerSendThenClose() async throws {
        let response = ControlMessage.startStreamResponse(
            StartStreamResponse(sessionId: "s1", accepted: false, reason: "duplicate sessionId")
        )
        var harness = try SessionHarness(trust: .trusted) { message in
            guard case .startStreamRequest = message else { return [] }
            return [.send(response), .close(.conflict), .send(.ping(Ping(timestamp: 9)))]
        }
        try await harness.send(Messages.startStream)
        #expect(try await harness.nextFrame().map { try ControlMessageCodec.decode(payload: $0) } == response)
        try await harness.expectClosed(with: .conflict)
    }

    @Test("an ERROR from a trusted peer goes to the handler and is not answered")
    func trustedErrorReachesHandler() async throws {
        var harness = try SessionHarness(trust: .trusted)
        try await harness.send(Messages.error)
        try await harness.expectOpen()
        #expect(harness.handled.all == [Messages.error, .ping(Ping(timestamp: 4_242))])
    }

    @Test("messages reach the handler one at a time, in order, and its replies come back in order")
    func handlerSeesMessagesInOrder() async throws {
        var harness = try SessionHarness(trust: .trusted)
        for timestamp in 1...5 { try await harness.send(.ping(Ping(timestamp: Int64(timestamp)))) }
        for timestamp in 1...5 {
            let frame = try #require(try await harness.nextFrame())
            #expect(try ControlMessageCodec.decode(payload: frame) == .pong(Ping(timestamp: Int64(timestamp))))
        }
        #expect(harness.handled.all == (1...5).map { .ping(Ping(timestamp: Int64($0))) })
    }

    @Test("the session ends when the peer closes, and says so")
    func peerCloseEndsTheSession() async throws {
        let harness = try SessionHarness(trust: .trusted)
        await harness.client.close(code: 5)
        #expect(await harness.session.value == .peerApplication(code: 5, reason: ""))
    }

    @Test("the ERROR for a protocol violation carries its code, message and inReplyTo")
    func errorFrameForViolation() {
        let violation = ControlProtocolError(
            .protocolError,
            "malformed PING: missing field timestamp",
            inReplyTo: "PING"
        )
        #expect(
            ControlSession.errorFrame(for: violation)
                == .error(.protocolError, "malformed PING: missing field timestamp", inReplyTo: "PING")
        )
    }
}
