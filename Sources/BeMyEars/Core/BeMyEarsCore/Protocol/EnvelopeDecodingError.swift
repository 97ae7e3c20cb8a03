/// Why a text frame is not a message the server can act on.
///
/// The signaling hub maps these to the protocol's answers: ``Code/tooLarge`` → ERROR PROTOCOL_ERROR and close
/// 1009; ``Code/notJSON``, ``Code/notAnObject``, ``Code/missingType`` → ERROR PROTOCOL_ERROR and close 1002;
/// ``Code/unknownType`` → ERROR UNKNOWN_TYPE, socket stays open; ``Code/invalidField`` → ERROR PROTOCOL_ERROR,
/// socket stays open (the frame is a well-formed message of a known type with, say, a numeric `callId`).
public struct EnvelopeDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String

        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// The frame is longer than the limit (65,536 bytes of UTF-8).
        public static let tooLarge = Code(rawValue: "tooLarge")
        /// The frame is not one JSON document.
        public static let notJSON = Code(rawValue: "notJSON")
        /// The document is not an object.
        public static let notAnObject = Code(rawValue: "notAnObject")
        /// The object has no `type`, or its `type` is not a string.
        public static let missingType = Code(rawValue: "missingType")
        /// `type` is a string the protocol does not define.
        public static let unknownType = Code(rawValue: "unknownType")
        /// A known type, but `callId`, `to` or `payload` has the wrong JSON type.
        public static let invalidField = Code(rawValue: "invalidField")

        public var description: String { rawValue }
    }

    public var code: Code
    /// What is wrong and what to send instead.
    public var message: String
    /// For ``Code/unknownType``: the type that was sent.
    public var typeName: String?

    public init(code: Code, message: String, typeName: String? = nil) {
        self.code = code
        self.message = message
        self.typeName = typeName
    }

    public var description: String { "\(code): \(message)" }
}
