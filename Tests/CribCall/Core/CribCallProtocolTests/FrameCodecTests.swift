import CanonicalJSON
import CribCallProtocol
import NIOCore
import TestSupport
import Testing

@Suite("ControlFrame: 4-byte big-endian length + 1…262,144 bytes of JSON")
struct FrameCodecTests {
    /// Seed 2.5.3 lists the frame of `{"type":"PING","timestamp":123}` as
    /// `00 00 00 21` + 31 payload bytes. The payload bytes are right, but the length is not: the JSON is 31 bytes
    /// (0x1f), not 33 (0x21). A frame that says 33 and carries 31 would make every reader wait for two more bytes,
    /// so the codec produces the seed's payload bytes exactly, behind the correct length.
    static let seedPingJSON = #"{"type":"PING","timestamp":123}"#
    static let seedListedFrame = Hex.decode(
        "00 00 00 21 7b 22 74 79 70 65 22 3a 22 50 49 4e 47 22 2c 22 74 69 6d 65 73 74 61 6d 70 22 3a 31 32 33 7d"
    )!
    static var seedPayload: [UInt8] { Array(seedListedFrame.dropFirst(4)) }
    static var correctFrame: [UInt8] { [0, 0, 0, 0x1F] + seedPayload }

    @Test("framing the seed's PING JSON gives the seed's payload bytes exactly, behind the true length 31")
    func seedPingFrameBytes() throws {
        #expect(Array(Self.seedPingJSON.utf8) == Self.seedPayload, "the seed's JSON and its hex agree")
        #expect(Self.seedPayload.count == 31)
        var buffer = ByteBuffer()
        try ControlFrame.encode(payload: Array(Self.seedPingJSON.utf8), into: &buffer)
        let bytes = buffer.readBytes(length: buffer.readableBytes)!
        #expect(bytes.count == Self.correctFrame.count)
        for (index, (ours, expected)) in zip(bytes, Self.correctFrame).enumerated() {
            #expect(ours == expected, "byte \(index): \(ours) != \(expected)")
        }
    }

    @Test("the seed's literal frame (length 33 for 31 bytes) is incomplete, so a reader waits instead of misparsing")
    func seedLiteralFrameIsIncomplete() throws {
        var buffer = ByteBuffer(bytes: Self.seedListedFrame)
        #expect(try ControlFrame.decode(from: &buffer) == nil)
        #expect(buffer.readableBytes == Self.seedListedFrame.count, "nothing consumed")
    }

    @Test("the seed's PING decodes to PING 123; our PING encodes in JCS key order, also 31 bytes")
    func seedPingDecodes() throws {
        var buffer = ByteBuffer(bytes: Self.correctFrame)
        let payload = try #require(try ControlFrame.decode(from: &buffer))
        #expect(buffer.readableBytes == 0)
        #expect(try ControlMessageCodec.decode(payload: payload) == .ping(Ping(timestamp: 123)))

        var ours = ByteBuffer()
        try ControlMessageCodec.frame(.ping(Ping(timestamp: 123)), into: &ours)
        let expected = [0, 0, 0, 0x1F] + Array(#"{"timestamp":123,"type":"PING"}"#.utf8)
        #expect(ours.readBytes(length: ours.readableBytes) == expected)
    }

    @Test("fed one byte at a time, the decoder asks for more until the frame is whole")
    func byteByByte() throws {
        var buffer = ByteBuffer()
        let frame = Self.correctFrame
        for (index, byte) in frame.enumerated() {
            buffer.writeInteger(byte)
            let decoded = try ControlFrame.decode(from: &buffer)
            if index < frame.count - 1 {
                #expect(decoded == nil, "a frame appeared after only \(index + 1) bytes")
                #expect(buffer.readableBytes == index + 1, "need-more-data must not consume")
            } else {
                #expect(decoded.map { String(buffer: $0) } == Self.seedPingJSON)
            }
        }
    }

    @Test("two frames in one read come out in order, and a partial third waits")
    func multipleFrames() throws {
        var buffer = ByteBuffer()
        try ControlFrame.encode(payload: Array("{\"type\":\"A\"}".utf8), into: &buffer)
        try ControlFrame.encode(payload: Array("{\"type\":\"B\"}".utf8), into: &buffer)
        buffer.writeBytes([0, 0, 0, 5, 0x7B])
        #expect(try ControlFrame.decode(from: &buffer).map { String(buffer: $0) } == "{\"type\":\"A\"}")
        #expect(try ControlFrame.decode(from: &buffer).map { String(buffer: $0) } == "{\"type\":\"B\"}")
        #expect(try ControlFrame.decode(from: &buffer) == nil)
        #expect(buffer.readableBytes == 5)
    }

    @Test("length 0 is a PROTOCOL_ERROR")
    func zeroLength() {
        var buffer = ByteBuffer(bytes: [0, 0, 0, 0])
        let error = #expect(throws: ControlProtocolError.self) { try ControlFrame.decode(from: &buffer) }
        #expect(error?.code == .protocolError)
    }

    @Test("an oversize length is refused from the header alone, without waiting for the body")
    func oversizeFromHeader() {
        for length: UInt32 in [262_145, 1 << 24, .max] {
            var buffer = ByteBuffer()
            buffer.writeInteger(length, endianness: .big)
            let error = #expect(throws: ControlProtocolError.self) { try ControlFrame.decode(from: &buffer) }
            #expect(error?.code == .protocolError)
            #expect(error?.message.contains("262144") == true)
        }
    }

    @Test("exactly 262,144 bytes is accepted; one more cannot be encoded")
    func maximumLength() throws {
        let payload = [UInt8](repeating: 0x20, count: ControlFrame.maxPayloadLength)
        var buffer = ByteBuffer()
        try ControlFrame.encode(payload: payload, into: &buffer)
        #expect(buffer.getInteger(at: 0, endianness: .big, as: UInt32.self) == 262_144)
        let frame = try #require(try ControlFrame.decode(from: &buffer))
        #expect(frame.readableBytes == 262_144)
        var other = ByteBuffer()
        #expect(throws: ControlProtocolError.self) {
            try ControlFrame.encode(payload: payload + [0x20], into: &other)
        }
        #expect(throws: ControlProtocolError.self) { try ControlFrame.encode(payload: [UInt8](), into: &other) }
    }
}
