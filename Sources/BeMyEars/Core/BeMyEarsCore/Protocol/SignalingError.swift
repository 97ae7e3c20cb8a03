/// A refusal the server tells the client as `ERROR {callId, payload:{code, message}}`.
///
/// `message` is for the person using the client: it says what went wrong and what to do.
public struct SignalingError: Error, Sendable, Hashable, CustomStringConvertible {
    public var code: ErrorCode
    public var message: String

    public init(code: ErrorCode, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
