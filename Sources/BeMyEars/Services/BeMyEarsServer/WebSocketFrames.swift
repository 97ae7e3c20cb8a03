import BeMyEarsCore
import NIOCore

/// Whole server-to-client WebSocket frames (RFC 6455 §5.2: FIN set, unmasked), header and payload in one buffer,
/// so that one encoding can be written to any number of sockets without a copy or an allocation per socket.
enum WebSocketFrames {
    private static let allocator = ByteBufferAllocator()

    /// A text frame carrying `text`.
    static func text(_ text: String) -> ByteBuffer {
        let length = text.utf8.count
        var buffer = allocator.buffer(capacity: length + 10)
        writeHeader(into: &buffer, opcode: 0x1, length: length)
        buffer.writeString(text)
        return buffer
    }

    /// A close frame with `code` and no reason.
    static func close(_ code: CloseCode) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: 4)
        writeHeader(into: &buffer, opcode: 0x8, length: 2)
        buffer.writeInteger(code.rawValue)
        return buffer
    }

    /// A pong answering a ping's `payload` (at most 125 bytes: the decoder refuses longer control frames).
    static func pong(_ payload: ByteBuffer) -> ByteBuffer {
        var payload = payload
        var buffer = allocator.buffer(capacity: payload.readableBytes + 2)
        writeHeader(into: &buffer, opcode: 0xA, length: payload.readableBytes)
        buffer.writeBuffer(&payload)
        return buffer
    }

    private static func writeHeader(into buffer: inout ByteBuffer, opcode: UInt8, length: Int) {
        buffer.writeInteger(0x80 | opcode)
        switch length {
        case ..<126:
            buffer.writeInteger(UInt8(length))
        case ...0xFFFF:
            buffer.writeInteger(UInt8(126))
            buffer.writeInteger(UInt16(length))
        default:
            buffer.writeInteger(UInt8(127))
            buffer.writeInteger(UInt64(length))
        }
    }
}
