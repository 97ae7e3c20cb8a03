import CPace
import Crypto
import Foundation
import NIOCore
import Testing

@testable import CribCallProtocol

@Suite("CribCallProtocol byte handling without raw pointers")
struct CribCallProtocolSafeByteAccessTests {
    @Test("sid is the UUID in RFC 9562 byte order followed by the nonce")
    func sessionIdentifierLayout() throws {
        let id = try #require(UUID(uuidString: "00112233-4455-6677-8899-AABBCCDDEEFF"))
        let nonce = (0..<16).map { UInt8(0xF0 | $0) }
        let sid = PINPairingKeys.sessionIdentifier(pairingSessionId: id, nonce: nonce)
        #expect(
            sid == [0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF]
                + nonce)
    }

    @Test("a ByteBuffer payload is decoded from its readable bytes only")
    func decodeReadableBytesOnly() throws {
        var buffer = ByteBufferAllocator().buffer(capacity: 64)
        buffer.writeString("garbage")
        buffer.writeString(#"{"timestamp":42,"type":"PING"}"#)
        buffer.writeString("trailing")
        buffer.moveReaderIndex(forwardBy: 7)
        buffer.moveWriterIndex(to: buffer.writerIndex - 8)
        #expect(try ControlMessageCodec.decode(payload: buffer) == .ping(Ping(timestamp: 42)))
        #expect(buffer.readerIndex == 7, "decoding does not consume the buffer")
    }

    @Test("the PIN keys are HKDF-SHA256 over the ISK held in the session key")
    func pinKeysUseSymmetricKey() throws {
        let sid = (0..<32).map { UInt8($0) }
        let ci = Array("ci".utf8)
        let initiator = CPaceInitiator(prs: Array("123456".utf8), ci: ci, sid: sid)
        let responder = try CPaceResponder(
            prs: Array("123456".utf8), ci: ci, sid: sid, peerMessage: initiator.message)
        let isk = try initiator.finish(peerMessage: responder.message)
        let keys = PINPairingKeys.derive(isk: isk, sid: sid)
        let expectedListener = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: responder.sessionKey.symmetricKey, salt: sid,
            info: Array("cribcall/pin/v1 listener".utf8), outputByteCount: 32)
        let expectedMonitor = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: responder.sessionKey.symmetricKey, salt: sid,
            info: Array("cribcall/pin/v1 monitor".utf8), outputByteCount: 32)
        #expect(keys.listener == expectedListener)
        #expect(keys.monitor == expectedMonitor)
        #expect(keys.listener != keys.monitor)
    }

    @Test("qrText is exactly the canonical JSON bytes decoded as UTF-8, non-ASCII text included")
    func qrTextRoundTrip() throws {
        let token = try #require(PairingToken(bytes: Array(repeating: 7, count: 16)))
        let payload = QRPairingPayload(
            monitorId: "m-1", monitorName: "Nursery ☾", monitorCertFingerprint: String(repeating: "ab", count: 32),
            monitorPublicKey: nil, pairingToken: token)
        #expect(Array(payload.qrText.utf8) == PairingCrypto.canonical(payload))
        #expect(payload.qrText.contains("Nursery ☾"))
    }
}
