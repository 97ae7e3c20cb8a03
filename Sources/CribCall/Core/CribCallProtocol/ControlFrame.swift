public import NIOCore

/// The control-stream framing (PROTOCOL.md §3): a 4-byte big-endian length L, then L bytes of UTF-8 JSON,
/// with 1 ≤ L ≤ 262,144.
public enum ControlFrame {
    /// The largest payload a frame may carry.
    public static let maxPayloadLength = 262_144
    /// Bytes of the length prefix.
    public static let headerLength = 4

    /// Reads one frame's payload from the front of `buffer`.
    ///
    /// A bad length is reported as soon as the 4 header bytes are there, without waiting for (or buffering) the
    /// body, so a peer cannot make us hold 4 GiB.
    /// - Parameter buffer: Bytes received so far; the frame is consumed on success.
    /// - Returns: The payload, or nil when more bytes are needed (nothing consumed).
    /// - Throws: `ControlProtocolError` with `.protocolError` for a zero or oversize length.
    public static func decode(from buffer: inout ByteBuffer) throws(ControlProtocolError) -> ByteBuffer? {
        guard let length = buffer.getInteger(at: buffer.readerIndex, endianness: .big, as: UInt32.self) else {
            return nil
        }
        guard length >= 1 else {
            throw ControlProtocolError(.protocolError, "frame length 0: a frame carries 1 to 262144 bytes of JSON")
        }
        guard length <= maxPayloadLength else {
            throw ControlProtocolError(
                .protocolError,
                "frame length \(length) exceeds the maximum of \(maxPayloadLength) bytes"
            )
        }
        guard buffer.readableBytes >= headerLength + Int(length) else { return nil }
        buffer.moveReaderIndex(forwardBy: headerLength)
        return buffer.readSlice(length: Int(length))
    }

    /// Appends a frame carrying `payload` to `buffer`.
    /// - Throws: `ControlProtocolError` if the payload is empty or too long to frame.
    public static func encode(payload: some Collection<UInt8>, into buffer: inout ByteBuffer)
        throws(ControlProtocolError)
    {
        let count = payload.count
        guard count >= 1, count <= maxPayloadLength else {
            throw ControlProtocolError(
                .internalError,
                "cannot frame \(count) bytes: a frame carries 1 to \(maxPayloadLength) bytes"
            )
        }
        buffer.reserveCapacity(minimumWritableBytes: headerLength + count)
        buffer.writeInteger(UInt32(count), endianness: .big)
        buffer.writeBytes(payload)
    }
}
