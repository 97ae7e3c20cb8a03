/// A JSON value, as the BeMyEars protocol carries it.
///
/// Payloads the server only forwards (OFFER, ANSWER, ICE, STATS_UPDATE, VIDEO_VISIBLE) stay `JSONValue`s from
/// decoding to encoding, so the server never interprets or logs their content. Numbers keep their literal text
/// (see ``JSONNumber``), so a forwarded payload is re-encoded with exactly the numbers the sender wrote.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case number(JSONNumber)
    case string(String)
    case array([JSONValue])
    /// An object. Keys are unique (the decoder rejects duplicates); the encoder writes them sorted by the bytes
    /// of their UTF-8 form.
    case object([String: JSONValue])
}

extension JSONValue {
    /// The member named `key` when this is an object, else nil.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members[key]
    }

    /// The string when this is a string, else nil.
    public var stringValue: String? {
        guard case .string(let value) = self else { return nil }
        return value
    }

    /// The Boolean when this is `true` or `false`, else nil.
    public var boolValue: Bool? {
        guard case .bool(let value) = self else { return nil }
        return value
    }

    /// The number when this is a number, else nil.
    public var numberValue: JSONNumber? {
        guard case .number(let value) = self else { return nil }
        return value
    }

    /// The elements when this is an array, else nil.
    public var arrayValue: [JSONValue]? {
        guard case .array(let value) = self else { return nil }
        return value
    }

    /// The members when this is an object, else nil.
    public var objectValue: [String: JSONValue]? {
        guard case .object(let value) = self else { return nil }
        return value
    }

    /// Whether this is `null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}
