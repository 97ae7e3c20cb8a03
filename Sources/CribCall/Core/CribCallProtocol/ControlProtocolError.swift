/// A violation of the control protocol found while reading a frame or a message. It maps directly to the
/// ERROR frame the session sends (and to the close code, since every such violation closes).
public struct ControlProtocolError: Error, Sendable, Hashable, CustomStringConvertible {
    public var code: ErrorCode
    /// A message for the peer's developer: what was wrong. It never contains secrets.
    public var message: String
    /// The offending message type, when it could be read.
    public var inReplyTo: String?

    public init(_ code: ErrorCode, _ message: String, inReplyTo: String? = nil) {
        self.code = code
        self.message = message
        self.inReplyTo = inReplyTo
    }

    public var description: String { "\(code.name): \(message)" }

    /// The ERROR message to send for this violation.
    public var errorMessage: ErrorMessage {
        ErrorMessage(code: code, message: message, inReplyTo: inReplyTo)
    }
}
