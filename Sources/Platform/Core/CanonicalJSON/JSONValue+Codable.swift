// `Codable` conformance, so a `JSONValue` can be embedded in other `Codable` types. `JSONValueEncoder` and
// `JSONValueDecoder` pass it through unchanged; other coders see it as the corresponding JSON primitive,
// array or string-keyed dictionary.

extension JSONValue: Codable {
    /// Decodes whichever JSON shape the decoder holds (null, Boolean, number, string, array, object).
    ///
    /// - Parameter decoder: The decoder to read from.
    /// - Throws: `DecodingError.dataCorrupted` when the value is none of the JSON shapes.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let text = try? container.decode(String.self) {
            self = .string(text)
        } else if let elements = try? container.decode([JSONValue].self) {
            self = .array(elements)
        } else if let members = try? container.decode([String: JSONValue].self) {
            self = .object(members)
        } else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "Value is not a JSON value.")
        }
    }

    /// Encodes the value as the corresponding JSON primitive, array or dictionary.
    ///
    /// - Parameter encoder: The encoder to write to.
    /// - Throws: Whatever the encoder throws (for example for a non-finite number).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let flag): try container.encode(flag)
        case .number(let number): try container.encode(number.doubleValue)
        case .string(let text): try container.encode(text)
        case .array(let elements): try container.encode(elements)
        case .object(let members): try container.encode(members)
        }
    }
}
