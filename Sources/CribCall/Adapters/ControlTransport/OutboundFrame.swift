import CribCallProtocol
import NIOCore

/// What a transport writes on the control stream for one `ControlConnection.send(_:)`: the payload behind its
/// length prefix (PROTOCOL.md §3), so no transport frames by itself.
public enum OutboundFrame {
    /// The frame carrying `payload`.
    ///
    /// - Throws: `ControlProtocolError` (`.internalError`) for an empty payload or one over 262,144 bytes.
    public static func bytes(carrying payload: [UInt8]) throws -> [UInt8] {
        var frame = ByteBuffer()
        try ControlFrame.encode(payload: payload, into: &frame)
        return Array(frame.readableBytesView)
    }
}
