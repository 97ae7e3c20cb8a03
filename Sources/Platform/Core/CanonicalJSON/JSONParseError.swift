/// Why and where `JSONParser` rejected its input.
///
/// `message` is meant for people and logs: it names the problem and its byte offset, for example
/// `duplicate key "a" at byte 17`. Programs should switch on `code` and read `offset`.
public struct JSONParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A machine-readable category of parse failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's stable name, e.g. `"duplicateKey"`.
        public let rawValue: String

        init(_ rawValue: String) {
            self.rawValue = rawValue
        }

        /// The code's stable name.
        public var description: String { rawValue }

        /// The input is not well-formed UTF-8 (including overlong forms, encoded surrogates, > U+10FFFF).
        public static let invalidUTF8 = Code("invalidUTF8")
        /// A byte that cannot start or continue the JSON text here (this includes a leading byte order mark).
        public static let unexpectedCharacter = Code("unexpectedCharacter")
        /// The input ended inside a value.
        public static let unexpectedEnd = Code("unexpectedEnd")
        /// Something other than whitespace follows the top-level value.
        public static let trailingData = Code("trailingData")
        /// An object has two members whose names decode to the same string.
        public static let duplicateKey = Code("duplicateKey")
        /// A `\u` escape names a surrogate that is not part of a high-low pair.
        public static let loneSurrogate = Code("loneSurrogate")
        /// A backslash escape that RFC 8259 does not define, or a `\u` without four hex digits.
        public static let invalidEscape = Code("invalidEscape")
        /// A number that does not follow the RFC 8259 grammar (leading zero, missing digits, ...).
        public static let invalidNumber = Code("invalidNumber")
        /// A number whose value rounds to an infinite double, such as `1e400`.
        public static let numberNotFinite = Code("numberNotFinite")
        /// An unescaped control character (below U+0020) inside a string.
        public static let controlCharacterInString = Code("controlCharacterInString")
        /// Arrays and objects are nested deeper than `JSONParser.Limits.maxDepth`.
        public static let tooDeep = Code("tooDeep")
        /// The input is longer than `JSONParser.Limits.maxBytes`.
        public static let tooLarge = Code("tooLarge")
    }

    /// The category of the failure.
    public var code: Code
    /// The zero-based byte offset in the input where the problem is.
    public var offset: Int
    /// A human-readable message that says what went wrong and at which byte.
    public var message: String

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: The category of the failure.
    ///   - offset: The zero-based byte offset of the problem.
    ///   - message: A human-readable message, which should mention the offset.
    public init(code: Code, offset: Int, message: String) {
        self.code = code
        self.offset = offset
        self.message = message
    }

    /// The human-readable message.
    public var description: String { message }
}
