/// WebSocket close codes the server uses.
public struct CloseCode: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    public let rawValue: UInt16

    public init(rawValue: UInt16) {
        self.rawValue = rawValue
    }

    /// 1002: not JSON, not an object, or no string `type`.
    public static let protocolError = CloseCode(rawValue: 1002)
    /// 1009: a text frame over 65,536 bytes.
    public static let messageTooBig = CloseCode(rawValue: 1009)
    /// 4001: no application message for the presence TTL (20 s).
    public static let heartbeatExpired = CloseCode(rawValue: 4001)

    public var description: String { String(rawValue) }
}
