/// The `code` of an ERROR message. A struct rather than an enum so that later protocol versions can add codes
/// without breaking exhaustive switches in clients.
public struct ErrorCode: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public static let protocolError = ErrorCode(rawValue: "PROTOCOL_ERROR")
    public static let unknownType = ErrorCode(rawValue: "UNKNOWN_TYPE")
    public static let notRegistered = ErrorCode(rawValue: "NOT_REGISTERED")
    public static let usernameTaken = ErrorCode(rawValue: "USERNAME_TAKEN")
    public static let invalidUsername = ErrorCode(rawValue: "INVALID_USERNAME")
    public static let unknownUser = ErrorCode(rawValue: "UNKNOWN_USER")
    public static let roleForbidden = ErrorCode(rawValue: "ROLE_FORBIDDEN")
    public static let unknownCall = ErrorCode(rawValue: "UNKNOWN_CALL")
    public static let notAParty = ErrorCode(rawValue: "NOT_A_PARTY")
    public static let badState = ErrorCode(rawValue: "BAD_STATE")
    public static let rateLimited = ErrorCode(rawValue: "RATE_LIMITED")
    public static let internalError = ErrorCode(rawValue: "INTERNAL_ERROR")

    /// Every code of protocol v1.
    public static let all: [ErrorCode] = [
        .protocolError, .unknownType, .notRegistered, .usernameTaken, .invalidUsername, .unknownUser,
        .roleForbidden, .unknownCall, .notAParty, .badState, .rateLimited, .internalError,
    ]

    public var description: String { rawValue }
}
