/// The application error codes of the control channel (seed 2.5.3, PROTOCOL.md §4). The same number is the
/// QUIC CONNECTION_CLOSE application error code when a session closes because of it.
public enum ErrorCode: Int, Sendable, Hashable, CaseIterable, Codable {
    case ok = 0
    case protocolError = 1
    case unauthorized = 2
    case unsupportedMessage = 3
    case conflict = 4
    case internalError = 5

    /// The wire name, e.g. `PROTOCOL_ERROR`.
    public var name: String {
        switch self {
        case .ok: "OK"
        case .protocolError: "PROTOCOL_ERROR"
        case .unauthorized: "UNAUTHORIZED"
        case .unsupportedMessage: "UNSUPPORTED_MESSAGE"
        case .conflict: "CONFLICT"
        case .internalError: "INTERNAL_ERROR"
        }
    }
}
