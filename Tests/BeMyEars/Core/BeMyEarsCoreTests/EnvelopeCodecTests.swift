import BeMyEarsCore
import BeMyEarsTestSupport
import CanonicalJSON
import Foundation
import Testing

@Suite("Envelope codec: decoding with the protocol's error mapping, deterministic encoding")
struct EnvelopeCodecTests {
    @Test("a well-formed envelope decodes with every field")
    func decodesAllFields() throws {
        let text =
            #"{"type":"OFFER","callId":"3f1c9b2e-1d2a-4c3b-9a8e-7f6d5c4b3a21","from":"x","to":"bob","#
            + #""payload":{"sdp":"v=0"}}"#
        let envelope = try EnvelopeCodec.decode(text)
        #expect(envelope.type == .offer)
        #expect(envelope.callId == "3f1c9b2e-1d2a-4c3b-9a8e-7f6d5c4b3a21")
        #expect(envelope.from == "x")
        #expect(envelope.to == "bob")
        #expect(envelope.payload == ["sdp": "v=0"])
    }

    @Test("unused fields may be omitted; null counts as absent")
    func optionalFields() throws {
        #expect(try EnvelopeCodec.decode(#"{"type":"HEARTBEAT"}"#) == Envelope(type: .heartbeat))
        let nulls = #"{"type":"HEARTBEAT","callId":null,"from":null,"to":null,"payload":null}"#
        #expect(try EnvelopeCodec.decode(nulls) == Envelope(type: .heartbeat))
    }

    @Test("every message type of the protocol decodes", arguments: MessageType.allCases)
    func everyType(type: MessageType) throws {
        #expect(try EnvelopeCodec.decode("{\"type\":\"\(type.rawValue)\"}").type == type)
    }

    @Test(
        "not JSON, not an object, or no string type → PROTOCOL_ERROR class errors",
        arguments: [
            ("", EnvelopeDecodingError.Code.notJSON),
            ("hello", .notJSON),
            ("{\"type\":\"HEARTBEAT\"", .notJSON),
            ("{\"type\":\"HEARTBEAT\",}", .notJSON),
            ("{'type':'HEARTBEAT'}", .notJSON),
            ("{\"type\":\"HEARTBEAT\"} {}", .notJSON),
            ("{\"type\":\"HEARTBEAT\",\"type\":\"REGISTER\"}", .notJSON),
            ("{\"type\":\"A\\ud800\"}", .notJSON),
            ("{\"type\":\"\u{01}\"}", .notJSON),
            ("{\"type\":\"HEARTBEAT\",\"n\":01}", .notJSON),
            ("{\"type\":\"HEARTBEAT\",\"n\":1.}", .notJSON),
            ("{\"type\":\"HEARTBEAT\",\"n\":NaN}", .notJSON),
            ("{\"type\":\"HEARTBEAT\",\"n\":tru}", .notJSON),
            ("[]", .notAnObject),
            ("[{\"type\":\"HEARTBEAT\"}]", .notAnObject),
            ("\"HEARTBEAT\"", .notAnObject),
            ("42", .notAnObject),
            ("null", .notAnObject),
            ("{}", .missingType),
            ("{\"type\":7}", .missingType),
            ("{\"type\":null}", .missingType),
            ("{\"type\":[\"HEARTBEAT\"]}", .missingType),
            ("{\"Type\":\"HEARTBEAT\"}", .missingType),
        ]
    )
    func malformed(text: String, expected: EnvelopeDecodingError.Code) {
        #expect {
            try EnvelopeCodec.decode(text)
        } throws: { error in
            (error as? EnvelopeDecodingError)?.code == expected
        }
    }

    @Test("a well-formed message of an unknown type is UNKNOWN_TYPE and names the type")
    func unknownType() {
        for typeName in ["DANCE", "heartbeat", "CALL_REQUEST ", ""] {
            #expect {
                try EnvelopeCodec.decode("{\"type\":\"\(typeName)\"}")
            } throws: { error in
                let error = error as? EnvelopeDecodingError
                return error?.code == .unknownType && error?.typeName == typeName
            }
        }
    }

    @Test(
        "fields of the wrong JSON type are invalidField (the socket stays open)",
        arguments: [
            #"{"type":"OFFER","callId":5}"#,
            #"{"type":"OFFER","callId":{"id":"x"}}"#,
            #"{"type":"CALL_REQUEST","to":true}"#,
            #"{"type":"CALL_REQUEST","to":["bob"]}"#,
            #"{"type":"OFFER","payload":"v=0"}"#,
            #"{"type":"OFFER","payload":[1,2]}"#,
            #"{"type":"OFFER","payload":0}"#,
        ]
    )
    func wrongFieldTypes(text: String) {
        #expect {
            try EnvelopeCodec.decode(text)
        } throws: { error in
            (error as? EnvelopeDecodingError)?.code == .invalidField
        }
    }

    @Test("a client's from of any type is ignored rather than refused")
    func fromIgnored() throws {
        #expect(try EnvelopeCodec.decode(#"{"type":"HEARTBEAT","from":42}"#) == Envelope(type: .heartbeat))
    }

    @Test("65,536 bytes decode; 65,537 bytes are tooLarge (multi-byte characters counted as bytes)")
    func sizeLimit() throws {
        let overhead = #"{"type":"STATS_UPDATE","payload":{"p":""}}"#.utf8.count
        let fits =
            #"{"type":"STATS_UPDATE","payload":{"p":""# + String(repeating: "a", count: 65_536 - overhead) + #""}}"#
        #expect(fits.utf8.count == 65_536)
        #expect(try EnvelopeCodec.decode(fits).type == .statsUpdate)

        let tooBig =
            #"{"type":"STATS_UPDATE","payload":{"p":""# + String(repeating: "a", count: 65_537 - overhead)
            + #""}}"#
        #expect(throws: EnvelopeDecodingError.self) { try EnvelopeCodec.decode(tooBig) }
        do {
            _ = try EnvelopeCodec.decode(tooBig)
        } catch {
            #expect(error.code == .tooLarge)
        }

        // 21,846 three-byte characters are 65,538 bytes although far fewer than 65,536 characters.
        let wide = #"{"type":"STATS_UPDATE","payload":{"p":""# + String(repeating: "€", count: 21_846) + #""}}"#
        #expect(wide.count < 65_536)
        #expect {
            try EnvelopeCodec.decode(wide)
        } throws: { error in
            (error as? EnvelopeDecodingError)?.code == .tooLarge
        }
    }

    @Test("nesting deeper than 64 levels is refused instead of exhausting the stack")
    func depthLimit() throws {
        // The envelope and payload objects are two levels; 62 arrays make 64.
        let shallow =
            #"{"type":"STATS_UPDATE","payload":{"a":"# + String(repeating: "[", count: 62)
            + String(repeating: "]", count: 62) + "}}"
        #expect(try EnvelopeCodec.decode(shallow).type == .statsUpdate)
        let tooDeep =
            #"{"type":"STATS_UPDATE","payload":{"a":"# + String(repeating: "[", count: 63)
            + String(repeating: "]", count: 63) + "}}"
        #expect {
            try EnvelopeCodec.decode(tooDeep)
        } throws: { error in
            (error as? EnvelopeDecodingError)?.code == .notJSON
        }
        let deep =
            #"{"type":"STATS_UPDATE","payload":{"a":"# + String(repeating: "[", count: 30_000)
            + String(repeating: "]", count: 30_000) + "}}"
        #expect {
            try EnvelopeCodec.decode(deep)
        } throws: { error in
            (error as? EnvelopeDecodingError)?.code == .notJSON
        }
    }

    @Test("strings: escapes, surrogate pairs and raw UTF-8 decode to the same text")
    func stringEscapes() throws {
        let text = #"{"type":"STATS_UPDATE","payload":{"s":"\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00é😀"}}"#
        let envelope = try EnvelopeCodec.decode(text)
        #expect(envelope.payload?["s"] == .string("\"\\/\u{08}\u{0C}\n\r\té😀é😀"))
    }

    @Test("encoding is deterministic: envelope field order, sorted payload keys, no whitespace")
    func deterministicEncoding() throws {
        let envelope = Envelope(
            type: .ice,
            callId: "3f1c9b2e-1d2a-4c3b-9a8e-7f6d5c4b3a21",
            from: "alice",
            to: "bob",
            payload: ["zeta": 1, "alpha": ["b": true, "a": nil], "Beta": "x", "_": []]
        )
        let expected =
            #"{"type":"ICE","callId":"3f1c9b2e-1d2a-4c3b-9a8e-7f6d5c4b3a21","from":"alice","to":"bob","#
            + #""payload":{"Beta":"x","_":[],"alpha":{"a":null,"b":true},"zeta":1}}"#
        #expect(EnvelopeCodec.encode(envelope) == expected)
        // The same value built in another order encodes identically.
        var other = Envelope(type: .ice)
        other.payload = ["_": [], "Beta": "x", "alpha": ["a": nil, "b": true], "zeta": 1]
        other.to = "bob"
        other.from = "alice"
        other.callId = "3f1c9b2e-1d2a-4c3b-9a8e-7f6d5c4b3a21"
        #expect(EnvelopeCodec.encode(other) == expected)
    }

    @Test("control characters are escaped; other characters stay UTF-8")
    func encodingEscapes() {
        let envelope = Envelope(type: .error, payload: ["message": .string("a\"b\\c\n\u{01}é😀\u{7F}")])
        let expected = #"{"type":"ERROR","payload":{"message":"a\"b\\c\n\u0001é😀"# + "\u{7F}\"}}"
        #expect(EnvelopeCodec.encode(envelope) == expected)
    }

    @Test("an opaque payload survives decode → encode exactly, numbers included")
    func opaquePayloadRoundTrip() throws {
        // Written in the encoder's key order, so the round trip must reproduce it byte for byte.
        let payload =
            #"{"big":12345678901234567890123,"candidate":{"candidate":"candidate:1 1 UDP 2122252543 "#
            + #"192.0.2.1 54321 typ host","sdpMLineIndex":0,"sdpMid":"0","usernameFragment":null},"#
            + #""exp":-1.50E+3,"list":[0.0,-0,1e5],"s":"é\u0001"}"#
        let text = #"{"type":"ICE","callId":"3f1c9b2e-1d2a-4c3b-9a8e-7f6d5c4b3a21","payload":"# + payload + "}"
        let envelope = try EnvelopeCodec.decode(text)
        #expect(EnvelopeCodec.encode(envelope) == text)
        #expect(envelope.payload?["big"]?.numberValue?.literal == "12345678901234567890123")
    }

    @Test("every server message round-trips through the codec")
    func serverMessagesRoundTrip() throws {
        let callId = CallID(testNumber: 7)
        let alice = try Username(validating: "alice")
        let bob = try Username(validating: "bob")
        let messages: [Envelope] = [
            .registered(
                username: alice,
                role: .caller,
                heartbeatIntervalSeconds: 15,
                presenceTTLSeconds: 20,
                iceServers: [ICEServer(urls: ["turn:example.org:3478"], username: "u", credential: "c")]
            ),
            .state(.inCall), .heartbeatAck, .presence([alice, bob]), .callRequest(callId, from: alice, to: bob),
            .callRinging(callId, to: bob, ringSeconds: 10), .callAccept(callId, from: bob, to: alice),
            .callDecline(callId, from: bob, to: alice), .busy(to: bob), .callEnded(callId, reason: .ringTimeout),
            .reportReceived(callId), .error(SignalingError(code: .badState, message: "m"), callId: "x"),
            .relayed(.answer, callId: callId, from: alice, to: bob, payload: ["sdp": "v=0"]),
        ]
        for message in messages {
            #expect(try EnvelopeCodec.decode(EnvelopeCodec.encode(message)) == message)
        }
    }

    @Test("server messages have exactly the protocol's shape")
    func serverMessageShapes() throws {
        let callId = CallID(testNumber: 1)
        let id = callId.rawValue
        let bob = try Username(validating: "bob")
        #expect(
            EnvelopeCodec.encode(.callRinging(callId, to: bob, ringSeconds: 10))
                == #"{"type":"CALL_RINGING","callId":"\#(id)","to":"bob","payload":{"ringSec":10}}"#
        )
        #expect(
            EnvelopeCodec.encode(.busy(to: bob)) == #"{"type":"BUSY","to":"bob","payload":{"reason":"NOT_AVAILABLE"}}"#
        )
        #expect(
            EnvelopeCodec.encode(.busy(to: bob, call: callId))
                == #"{"type":"BUSY","callId":"\#(id)","to":"bob","payload":{"reason":"NOT_AVAILABLE"}}"#
        )
        #expect(
            EnvelopeCodec.encode(.callEnded(callId, reason: .hangup))
                == #"{"type":"CALL_ENDED","callId":"\#(id)","payload":{"reason":"HANGUP"}}"#
        )
        #expect(
            EnvelopeCodec.encode(.presence([bob]))
                == #"{"type":"PRESENCE","payload":{"interpreters":[{"username":"bob"}]}}"#
        )
        #expect(EnvelopeCodec.encode(.heartbeatAck) == #"{"type":"HEARTBEAT_ACK"}"#)
    }

    @Test("numbers of any magnitude are forwarded exactly as written, even beyond the range of a double")
    func numbersBeyondDoubles() throws {
        let text =
            #"{"type":"STATS_UPDATE","callId":"3f1c9b2e-1d2a-4c3b-9a8e-7f6d5c4b3a21","payload":{"huge":1e400,"#
            + #""long":123456789012345678901234567890.000,"tiny":-1E-400}}"#
        let envelope = try EnvelopeCodec.decode(text)
        #expect(EnvelopeCodec.encode(envelope) == text)
        #expect(envelope.payload?["huge"]?.numberValue?.literal == "1e400")
    }

    @Test(
        "a frame that is not JSON is refused in the protocol's words, naming the problem",
        arguments: [
            ("", "the text ends in the middle of a value"),
            (#"{"type":"HEARTBEAT",}"#, "unexpected character at byte 20"),
            (#"{"type":"HEARTBEAT"} {}"#, "extra characters after the JSON value at byte 21"),
            (#"{"type":"HEARTBEAT","type":"REGISTER"}"#, "an object repeats a key (at byte 20)"),
            (#"{"type":"A\ud800"}"#, #"\u escape of a lone UTF-16 surrogate at byte 10"#),
            ("{\"type\":\"\u{01}\"}", "unescaped control character in a string at byte 9"),
            (#"{"type":"HEARTBEAT","n":01}"#, "malformed number at byte 24"),
            (#"{"type":"HEARTBEAT","n":"\q"}"#, "malformed escape sequence at byte 25"),
            (
                #"{"type":"STATS_UPDATE","payload":{"a":"# + String(repeating: "[", count: 63)
                    + String(repeating: "]", count: 63) + "}}",
                "values are nested more than 64 levels deep"
            ),
        ]
    )
    func notJSONMessages(text: String, problem: String) {
        #expect {
            try EnvelopeCodec.decode(text)
        } throws: { error in
            let error = error as? EnvelopeDecodingError
            return error?.code == .notJSON
                && error?.message == "This message is not valid JSON (\(problem)); send one JSON object per text frame."
        }
    }
}
