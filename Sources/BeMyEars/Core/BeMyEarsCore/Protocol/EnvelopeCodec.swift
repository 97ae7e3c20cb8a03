import CanonicalJSON

/// Text frame ⇄ ``Envelope``.
///
/// Decoding is strict RFC 8259 JSON (CanonicalJSON's parser: no duplicate keys, no lone surrogates, nesting limit
/// 64, numbers of any magnitude kept as written). Encoding is deterministic: the envelope's fields in the order
/// `type, callId, from, to, payload`, absent ones omitted, no whitespace, payload object keys sorted by their UTF-8
/// bytes, numbers as their literal text (`JSONValue.serialize(into:)`). Envelopes built the same way give
/// identical text, and a decoded payload is encoded again with exactly the sender's numbers.
public enum EnvelopeCodec {
    /// The largest text frame accepted, in bytes of UTF-8.
    public static let maximumFrameBytes = 65_536
    /// The deepest nesting of objects and arrays accepted, the envelope object included.
    static let maximumDepth = 64

    /// Decodes one text frame.
    ///
    /// A client's `from` is not checked (the server replaces it with the registered username); it is kept when
    /// it is a string and dropped otherwise. `null` counts as absent for every field but `type`.
    /// - Parameters:
    ///   - text: The frame.
    ///   - maximumBytes: The size limit; frames longer than this are refused before parsing.
    /// - Returns: The envelope.
    /// - Throws: ``EnvelopeDecodingError``; its code says how the protocol answers.
    public static func decode(
        _ text: String,
        maximumBytes: Int = maximumFrameBytes
    ) throws(EnvelopeDecodingError) -> Envelope {
        let size = text.utf8.count
        guard size <= maximumBytes else {
            throw EnvelopeDecodingError(
                code: .tooLarge,
                message: "This message is \(size) bytes; messages are limited to \(maximumBytes) bytes."
            )
        }
        let document: JSONValue
        do {
            let parser = JSONParser(
                limits: .init(maxDepth: maximumDepth, maxBytes: maximumBytes),
                numberRange: .unlimited
            )
            document = try parser.parse(text)
        } catch {
            throw EnvelopeDecodingError(
                code: .notJSON,
                message: "This message is not valid JSON (\(summary(of: error))); send one JSON object per text frame."
            )
        }
        guard case .object(let members) = document else {
            throw EnvelopeDecodingError(
                code: .notAnObject,
                message: "A message must be a JSON object like {\"type\":\"HEARTBEAT\"}."
            )
        }
        guard case .string(let typeName)? = members["type"] else {
            throw EnvelopeDecodingError(
                code: .missingType,
                message: "A message needs a string \"type\", e.g. {\"type\":\"HEARTBEAT\"}."
            )
        }
        guard let type = MessageType(rawValue: typeName) else {
            throw EnvelopeDecodingError(
                code: .unknownType,
                message: "Unknown message type \(quoted(typeName)); see the BeMyEars protocol for the types.",
                typeName: typeName
            )
        }
        let callId = try optionalString("callId", in: members, type: typeName)
        let to = try optionalString("to", in: members, type: typeName)
        let from = members["from"]?.stringValue
        var payload = members["payload"]
        switch payload {
        case nil, .object?: break
        case .null?: payload = nil
        case .some:
            throw EnvelopeDecodingError(
                code: .invalidField,
                message: "\"payload\" of \(typeName) must be a JSON object."
            )
        }
        return Envelope(type: type, callId: callId, from: from, to: to, payload: payload)
    }

    /// Encodes an envelope as one text frame (deterministic; see the type's documentation).
    public static func encode(_ envelope: Envelope) -> String {
        var output: [UInt8] = []
        output.append(contentsOf: #"{"type":"#.utf8)
        JSONValue.string(envelope.type.rawValue).serialize(into: &output)
        for (name, value) in [("callId", envelope.callId), ("from", envelope.from), ("to", envelope.to)] {
            guard let value else { continue }
            output.append(contentsOf: ",\"\(name)\":".utf8)
            JSONValue.string(value).serialize(into: &output)
        }
        if let payload = envelope.payload {
            output.append(contentsOf: #","payload":"#.utf8)
            payload.serialize(into: &output)
        }
        output.append(UInt8(ascii: "}"))
        return String(decoding: output, as: UTF8.self)
    }

    private static func optionalString(
        _ name: String,
        in members: [String: JSONValue],
        type: String
    ) throws(EnvelopeDecodingError) -> String? {
        switch members[name] {
        case nil, .null?: return nil
        case .string(let value)?: return value
        case .some:
            throw EnvelopeDecodingError(code: .invalidField, message: "\"\(name)\" of \(type) must be a string.")
        }
    }

    /// What is wrong with a frame that is not JSON, in the words ERROR messages have always used.
    static func summary(of error: JSONParseError) -> String {
        switch error.code {
        case .unexpectedEnd: "the text ends in the middle of a value"
        case .invalidNumber: "malformed number at byte \(error.offset)"
        case .invalidEscape: "malformed escape sequence at byte \(error.offset)"
        case .controlCharacterInString: "unescaped control character in a string at byte \(error.offset)"
        case .loneSurrogate: "\\u escape of a lone UTF-16 surrogate at byte \(error.offset)"
        case .duplicateKey: "an object repeats a key (at byte \(error.offset))"
        case .tooDeep: "values are nested more than \(maximumDepth) levels deep"
        case .trailingData: "extra characters after the JSON value at byte \(error.offset)"
        // unexpectedCharacter, and what a frame cannot cause (invalidUTF8: a String is UTF-8; tooLarge: the size
        // was checked first; numberNotFinite: numbers of any magnitude are accepted).
        default: "unexpected character at byte \(error.offset)"
        }
    }

    /// `text` in quotes, shortened to 40 characters so an error never echoes a whole frame.
    static func quoted(_ text: String) -> String {
        let shown = text.count > 40 ? text.prefix(40) + "…" : Substring(text)
        return "\"\(shown)\""
    }
}
