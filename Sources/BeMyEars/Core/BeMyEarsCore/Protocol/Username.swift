/// A registered username: 3–32 ASCII characters of `A-Z a-z 0-9 . _ -`, lowercased.
///
/// Validation looks at the text as sent, before lowercasing, so that a character outside ASCII which
/// lowercases to an ASCII letter (e.g. U+212A KELVIN SIGN → "k") is rejected instead of impersonating a name.
/// Usernames order by the bytes of their UTF-8 form, the order PRESENCE lists them in.
public struct Username: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The lowercase name.
    public let rawValue: String

    /// Lengths a username may have, in characters.
    public static let allowedLengths = 3...32

    /// The rule, as told to people whose username was refused.
    public static let rule = "usernames are 3–32 characters of letters, digits, '.', '_' or '-'"

    /// Validates and lowercases `text`.
    /// - Throws: ``SignalingError`` with code `INVALID_USERNAME` and a message naming the broken rule.
    public init(validating text: String) throws(SignalingError) {
        var lowercased: [UInt8] = []
        lowercased.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): lowercased.append(byte + 0x20)
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                lowercased.append(byte)
            default:
                throw SignalingError(
                    code: .invalidUsername,
                    message: text.isEmpty
                        ? "Choose a username: \(Self.rule)."
                        : "This username contains a character that is not allowed (spaces, accents and symbols "
                            + "are not): \(Self.rule)."
                )
            }
        }
        guard !lowercased.isEmpty else {
            throw SignalingError(code: .invalidUsername, message: "Choose a username: \(Self.rule).")
        }
        guard Self.allowedLengths.contains(lowercased.count) else {
            let problem = lowercased.count < Self.allowedLengths.lowerBound ? "too short" : "too long"
            throw SignalingError(
                code: .invalidUsername,
                message: "This username is \(problem) (\(lowercased.count) characters): \(Self.rule)."
            )
        }
        self.rawValue = String(decoding: lowercased, as: UTF8.self)
    }

    /// The username for `text`, or nil when `text` breaks the rule.
    public init?(_ text: String) {
        guard let name = try? Username(validating: text) else { return nil }
        self = name
    }

    public var description: String { rawValue }

    public static func < (lhs: Username, rhs: Username) -> Bool {
        lhs.rawValue.utf8.lexicographicallyPrecedes(rhs.rawValue.utf8)
    }
}

extension Username: Codable {
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        do {
            self = try Username(validating: text)
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.message))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
