import CanonicalJSON
import CribCallProtocol
import NIOCore
import Testing

@Suite("ControlMessageCodec: every message type, in JCS form")
struct MessageCodecTests {
    static let transcript = PairingTranscript(
        monitorId: "0f8fad5b-d9cb-469f-a165-70867728950e", listenerId: "7c9e6679-7425-40de-944b-e07fc1f90ae7",
        listenerPublicKey: "MCowBQYDK2VwAyEA", listenerCertFingerprint: String(repeating: "a", count: 64),
        monitorCertFingerprint: String(repeating: "b", count: 64), pairingSessionId: "s-1"
    )

    /// One example of every message the protocol knows, with optional fields both set and absent.
    static let examples: [ControlMessage] = [
        .pairRequest(
            PairRequest(
                listenerId: "L1", listenerName: "Dad’s Phone", listenerPublicKey: "AAAA",
                listenerCertFingerprint: "ab", authTag: "tag")),
        .pairAccepted(PairAccepted(monitorId: "M1", confirmTag: "c")),
        .pairAccepted(PairAccepted(monitorId: "M1", confirmTag: nil)),
        .pairRejected(PairRejected(reason: .invalidPIN, attemptsRemaining: 2)),
        .pairRejected(PairRejected(reason: .expired)),
        .pinPairingInit(
            PinPairingInit(
                listenerId: "L1", listenerName: "n", protocolVersion: 1,
                listenerCertFingerprint: "f", nonce: "bm9uY2U=")),
        .pinRequired(PinRequired(pairingSessionId: "PS1", pakeMsgA: "YQ==", expiresInSec: 60, maxAttempts: 3)),
        .pinSubmit(PinSubmit(pairingSessionId: "PS1", pakeMsgB: "Yg==", transcript: transcript, authTag: "t")),
        .noiseEvent(NoiseEvent(monitorId: "M1", timestamp: 1_790_000_000_123, peakLevel: 85, seq: 7, eventId: "e7")),
        .noiseEvent(
            NoiseEvent(
                monitorId: "M1", timestamp: 1, peakLevel: 60, seq: 8, eventId: "e8", kind: "cry",
                autoStreamSessionId: "auto-1", replayed: true)),
        .eventsSince(EventsSince(afterSeq: 41)),
        .startStreamRequest(StartStreamRequest(sessionId: "S123", mediaType: .audioVideo)),
        .startStreamResponse(StartStreamResponse(sessionId: "S123", accepted: false, reason: "busy")),
        .endStream(StreamReference(sessionId: "S123")),
        .pinStream(StreamReference(sessionId: "S123")),
        .streamEndingSoon(StreamEndingSoon(sessionId: "S123", secondsRemaining: 10)),
        .webrtcOffer(SessionDescription(sessionId: "S123", sdp: "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\n")),
        .webrtcAnswer(SessionDescription(sessionId: "S123", sdp: "v=0\r\n")),
        .webrtcIce(
            IceCandidateMessage(
                sessionId: "S123",
                candidate: .init(
                    candidate: "candidate:1 1 UDP 2122252543 192.168.1.20 50000 typ host", sdpMid: "0", sdpMLineIndex: 0
                ))),
        .webrtcIce(
            IceCandidateMessage(sessionId: "S123", candidate: .init(candidate: "", sdpMid: nil, sdpMLineIndex: nil))),
        .ping(Ping(timestamp: 123)),
        .pong(Ping(timestamp: 123)),
        .unpair(Unpair(listenerId: "L1")),
        .unpaired(Unpaired(listenerId: "L1")),
        .error(.protocolError, "bad frame", inReplyTo: "PING"),
        .error(.conflict, "dup"),
        .safetyStatus(
            SafetyStatus(
                seq: 3, monitoring: .active, movement: .still, position: .onBack, faceVisible: true,
                updatedAt: 1_790_000_000_500)),
        .safetyStatus(SafetyStatus(seq: 4, monitoring: .paused, reason: "camera disconnected", updatedAt: 2)),
        .safetyAlert(
            SafetyAlert(
                seq: 9, alertId: "a9", kind: .faceCovered, detectedAt: 1_790_000_000_900, confidence: 0.82,
                detector: "face-haar", evidence: try! SafetyEvidence(width: 160, height: 120, jpeg: [0xFF, 0xD8, 0xFF]))
        ),
        .safetyAlert(
            SafetyAlert(
                seq: 10, alertId: "a10", kind: .crying, detectedAt: 3, confidence: 1, detector: "cry-pitch",
                replayed: true)),
        .alertAction(AlertAction(alertId: "a9", action: .checking)),
        .alertAction(AlertAction(alertId: "a10", action: .mute, minutes: 5)),
        .alertUpdated(AlertUpdated(alertId: "a9", state: .checking, by: "Dad’s laptop", at: 4)),
        .alertUpdated(AlertUpdated(alertId: "a10", state: .muted, by: "Mum", at: 5, mutedUntil: 300_005)),
        .monitorState(MonitorState(monitoring: .on)),
        .monitorState(MonitorState(monitoring: .off)),
    ]

    @Test("every message survives encode → decode unchanged", arguments: examples)
    func roundTrip(_ message: ControlMessage) throws {
        let bytes = ControlMessageCodec.encode(message)
        #expect(try ControlMessageCodec.decode(payload: bytes) == message)
    }

    @Test("every encoded message is already canonical (RFC 8785) and carries its type", arguments: examples)
    func encodedFormIsCanonical(_ message: ControlMessage) throws {
        let bytes = ControlMessageCodec.encode(message)
        #expect(try CanonicalJSON.canonicalize(bytes) == bytes)
        let value = try JSONParser().parse(bytes)
        #expect(value["type"] == .string(message.typeName))
    }

    @Test("every known type has an example (so the round trip covers the whole protocol)")
    func examplesCoverEveryType() {
        let covered = Set(Self.examples.compactMap(\.type))
        #expect(covered == Set(ControlMessageType.allCases))
    }

    @Test("absent optional fields are omitted, not sent as null")
    func optionalsOmitted() {
        let text = String(
            decoding: ControlMessageCodec.encode(.pairRejected(PairRejected(reason: .expired))), as: UTF8.self)
        #expect(text == #"{"reason":"EXPIRED","type":"PAIR_REJECTED"}"#)
    }

    @Test("the ERROR message has code, error name, message and inReplyTo")
    func errorShape() {
        let text = String(
            decoding: ControlMessageCodec.encode(.error(.unauthorized, "pair first", inReplyTo: "PING")),
            as: UTF8.self)
        #expect(text == #"{"code":2,"error":"UNAUTHORIZED","inReplyTo":"PING","message":"pair first","type":"ERROR"}"#)
    }

    @Test("an unknown type decodes to .unknown with its whole body, and re-encodes unchanged")
    func unknownType() throws {
        let payload = Array(#"{"type":"FUTURE_THING","x":[1,2]}"#.utf8)
        let message = try ControlMessageCodec.decode(payload: payload)
        guard case .unknown(let type, let body) = message else {
            Issue.record("expected .unknown, got \(message)")
            return
        }
        #expect(type == "FUTURE_THING")
        #expect(body["x"] == [1, 2])
        #expect(message.type == nil)
        #expect(ControlMessageCodec.encode(message) == payload)
    }

    @Test("extra fields in a known type are ignored (forward compatibility)")
    func extraFieldsIgnored() throws {
        let payload = Array(#"{"type":"PING","timestamp":5,"futureField":{"a":1}}"#.utf8)
        #expect(try ControlMessageCodec.decode(payload: payload) == .ping(Ping(timestamp: 5)))
    }

    @Test(
        "framing violations are PROTOCOL_ERROR with a message that says what is wrong",
        arguments: [
            ("{\"type\":\"PING\"", "invalid JSON"),
            ("[1,2]", "must be a JSON object"),
            ("\"PING\"", "must be a JSON object"),
            ("{\"timestamp\":1}", "needs a string \"type\""),
            ("{\"type\":5}", "needs a string \"type\""),
            ("{\"type\":\"PING\",\"type\":\"PONG\"}", "invalid JSON"),
            ("{\"type\":\"PING\",\"timestamp\":1e400}", "invalid JSON"),
            ("{\"type\":\"PING\"}", "missing field timestamp"),
            ("{\"type\":\"PING\",\"timestamp\":\"soon\"}", "field timestamp"),
            ("{\"type\":\"START_STREAM_REQUEST\",\"sessionId\":\"s\",\"mediaType\":\"smell\"}", "mediaType"),
            (
                "{\"type\":\"PIN_SUBMIT\",\"pairingSessionId\":\"p\",\"pakeMsgB\":\"b\",\"authTag\":\"t\",\"transcript\":{}}",
                "missing field transcript.monitorId"
            ),
        ]
    )
    func protocolErrors(payload: String, expected: String) {
        let error = #expect(throws: ControlProtocolError.self) {
            try ControlMessageCodec.decode(payload: Array(payload.utf8))
        }
        #expect(error?.code == .protocolError)
        #expect(error?.message.contains(expected) == true, "message was: \(error?.message ?? "none")")
    }

    @Test("a malformed known message names itself in inReplyTo")
    func malformedInReplyTo() {
        let error = #expect(throws: ControlProtocolError.self) {
            try ControlMessageCodec.decode(payload: Array(#"{"type":"EVENTS_SINCE","afterSeq":1.5}"#.utf8))
        }
        #expect(error?.inReplyTo == "EVENTS_SINCE")
    }

    @Test("invalid UTF-8 in a frame is a PROTOCOL_ERROR")
    func invalidUTF8() {
        let payload: [UInt8] = Array(#"{"type":"PI"#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8)
        let error = #expect(throws: ControlProtocolError.self) { try ControlMessageCodec.decode(payload: payload) }
        #expect(error?.code == .protocolError)
    }

    @Test("decoding from a ByteBuffer equals decoding from bytes")
    func byteBufferDecode() throws {
        let buffer = ByteBuffer(string: #"{"type":"PONG","timestamp":9}"#)
        #expect(try ControlMessageCodec.decode(payload: buffer) == .pong(Ping(timestamp: 9)))
    }

    // MARK: PROTOCOL.md §11

    @Test("SAFETY_STATUS always carries faceVisible, as null when it cannot be told; severities follow the kind")
    func safetyStatusWireForm() throws {
        let status = SafetyStatus(seq: 4, monitoring: .stale, reason: "too dark to judge", updatedAt: 7)
        #expect(
            String(decoding: ControlMessageCodec.encode(.safetyStatus(status)), as: UTF8.self)
                == #"{"faceVisible":null,"monitoring":"stale","movement":"unknown","position":"unknown","#
                + #""reason":"too dark to judge","seq":4,"type":"SAFETY_STATUS","updatedAt":7}"#)
        // Absent and null both read as "cannot tell".
        let absent =
            #"{"type":"SAFETY_STATUS","seq":1,"monitoring":"active","movement":"moving","#
            + #""position":"on_stomach","updatedAt":9}"#
        guard case .safetyStatus(let read) = try ControlMessageCodec.decode(payload: Array(absent.utf8)) else {
            Issue.record("not a SAFETY_STATUS")
            return
        }
        #expect(read.faceVisible == nil && read.position == .onStomach && read.movement == .moving)
        #expect(SafetyAlertKind.faceCovered.severity == .high && SafetyAlertKind.onStomach.severity == .high)
        #expect(SafetyAlertKind.stillness.severity == .medium && SafetyAlertKind.crying.severity == .medium)
    }

    @Test("an alert of a kind this version does not know still decodes; unknown states and actions do not")
    func extensibleKinds() throws {
        let future =
            #"{"type":"SAFETY_ALERT","seq":1,"alertId":"a","kind":"too_warm","severity":"medium","#
            + #""detectedAt":1,"confidence":0.5,"detector":"thermo"}"#
        guard case .safetyAlert(let alert) = try ControlMessageCodec.decode(payload: Array(future.utf8)) else {
            Issue.record("not a SAFETY_ALERT")
            return
        }
        #expect(alert.kind.rawValue == "too_warm" && alert.evidence == nil)
        let badAction = #"{"type":"ALERT_ACTION","alertId":"a","action":"panic"}"#
        #expect(throws: ControlProtocolError.self) { try ControlMessageCodec.decode(payload: Array(badAction.utf8)) }
        let badState =
            #"{"type":"SAFETY_STATUS","seq":1,"monitoring":"maybe","movement":"still","#
            + #""position":"unknown","updatedAt":1}"#
        #expect(throws: ControlProtocolError.self) { try ControlMessageCodec.decode(payload: Array(badState.utf8)) }
    }

    @Test("MONITOR_STATE is exactly {type, monitoring: on|off}; anything else for monitoring is refused")
    func monitorState() throws {
        let off = ControlMessageCodec.encode(.monitorState(MonitorState(monitoring: .off)))
        #expect(String(decoding: off, as: UTF8.self) == #"{"monitoring":"off","type":"MONITOR_STATE"}"#)
        let paused = #"{"type":"MONITOR_STATE","monitoring":"paused"}"#
        #expect(throws: ControlProtocolError.self) { try ControlMessageCodec.decode(payload: Array(paused.utf8)) }
        let missing = #"{"type":"MONITOR_STATE"}"#
        #expect(throws: ControlProtocolError.self) { try ControlMessageCodec.decode(payload: Array(missing.utf8)) }
    }

    @Test("evidence is at most 50 KB of JPEG, both when made and when read")
    func evidenceBound() throws {
        let largest = try SafetyEvidence(width: 320, height: 240, jpeg: [UInt8](repeating: 7, count: 50_000))
        #expect(largest.jpegBytes?.count == 50_000)
        #expect(throws: ControlProtocolError.self) {
            try SafetyEvidence(width: 320, height: 240, jpeg: [UInt8](repeating: 7, count: 50_001))
        }
        let oversize = String(repeating: "A", count: 66_672)  // 50,004 bytes once decoded
        let message =
            #"{"type":"SAFETY_ALERT","seq":1,"alertId":"a","kind":"crying","severity":"medium","#
            + #""detectedAt":1,"confidence":1,"detector":"d","evidence":{"width":1,"height":1,"jpeg":""#
            + oversize + #""}}"#
        #expect(throws: ControlProtocolError.self) { try ControlMessageCodec.decode(payload: Array(message.utf8)) }
    }

    @Test("a mute lasts the minutes asked for within 1…120, else 5; confidence is kept within 0…1")
    func muteAndConfidenceBounds() {
        #expect(AlertAction(alertId: "a", action: .mute).muteMinutes == 5)
        #expect(AlertAction(alertId: "a", action: .mute, minutes: 30).muteMinutes == 30)
        #expect(AlertAction(alertId: "a", action: .mute, minutes: 0).muteMinutes == 5)
        #expect(AlertAction(alertId: "a", action: .mute, minutes: 10_000).muteMinutes == 5)
        #expect(
            SafetyAlert(seq: 1, alertId: "a", kind: .crying, detectedAt: 1, confidence: 3, detector: "d").confidence
                == 1)
        #expect(
            SafetyAlert(seq: 1, alertId: "a", kind: .crying, detectedAt: 1, confidence: -.infinity, detector: "d")
                .confidence == 0)
    }
}
