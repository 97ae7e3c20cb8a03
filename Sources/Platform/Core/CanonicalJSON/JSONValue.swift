/// An in-memory JSON value restricted to the I-JSON subset (RFC 7493) that RFC 8785 canonicalizes.
///
/// Strings keep their exact Unicode scalars (no normalization is ever applied), so a value parsed from
/// `"A\u030A"` serializes back to `A` + U+030A, not to U+00C5.
///
/// Equality is *exact*: two values are equal exactly when they have the same canonical serialization.
/// Strings and object keys compare by Unicode scalars, not by Swift's canonical-equivalence `String`
/// equality, and numbers compare as `Double` (so `0.0 == -0.0`, both serializing as `0`), not by their literals
/// (see `JSONNumber`).
///
/// Because `.object` is a Swift `Dictionary`, an object cannot hold two keys that are distinct scalar
/// sequences but canonically equivalent (for example U+00C5 and `A` U+030A); `JSONParser` rejects such input
/// as a duplicate key.
public enum JSONValue: Sendable {
    /// The literal `null`.
    case null
    /// The literals `true` and `false`.
    case bool(Bool)
    /// A number: its `Double` value and the literal it was written as. Parsed numbers are finite doubles unless
    /// the parser allows `JSONParser.NumberRange.unlimited`; a non-finite value serializes as `null`.
    case number(JSONNumber)
    /// A string, kept with its exact Unicode scalars.
    case string(String)
    /// An ordered array.
    case array([JSONValue])
    /// An object; member order is irrelevant because canonical serialization sorts the keys.
    case object([String: JSONValue])
}

// MARK: - Accessors

extension JSONValue {
    /// A number made from a `Double` (see `JSONNumber.init(_:)`), so that `.number(2.5)` and `.number(x)` read
    /// as they did when numbers were plain doubles.
    ///
    /// - Parameter value: The number's value; a non-finite one serializes as `null`.
    /// - Returns: `.number(JSONNumber(value))`.
    public static func number(_ value: Double) -> JSONValue {
        .number(JSONNumber(value))
    }

    /// The string payload, or `nil` when this is not a `.string`.
    public var stringValue: String? {
        if case .string(let value) = self { value } else { nil }
    }

    /// The number payload, or `nil` when this is not a `.number`.
    public var numberValue: JSONNumber? {
        if case .number(let value) = self { value } else { nil }
    }

    /// The number payload's `Double` value, or `nil` when this is not a `.number`.
    public var doubleValue: Double? {
        if case .number(let value) = self { value.doubleValue } else { nil }
    }

    /// The Boolean payload, or `nil` when this is not a `.bool`.
    public var boolValue: Bool? {
        if case .bool(let value) = self { value } else { nil }
    }

    /// The members, or `nil` when this is not an `.object`.
    public var objectValue: [String: JSONValue]? {
        if case .object(let value) = self { value } else { nil }
    }

    /// The elements, or `nil` when this is not an `.array`.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { value } else { nil }
    }

    /// Whether this is `.null`.
    public var isNull: Bool {
        if case .null = self { true } else { false }
    }

    /// The member named `key` when this is an object.
    ///
    /// - Parameter key: The member name.
    /// - Returns: The member's value, or `nil` when this is not an object or has no such member.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { members[key] } else { nil }
    }

    /// The element at `index` when this is an array.
    ///
    /// - Parameter index: A zero-based position.
    /// - Returns: The element, or `nil` when this is not an array or `index` is out of bounds.
    public subscript(index: Int) -> JSONValue? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }
}

// MARK: - Exact equality

extension JSONValue: Hashable {
    /// Exact equality: strings and keys compare by Unicode scalars, numbers as `Double`.
    ///
    /// - Parameters:
    ///   - lhs: A value.
    ///   - rhs: Another value.
    /// - Returns: `true` when both values have the same canonical serialization.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null):
            return true
        case (.bool(let a), .bool(let b)):
            return a == b
        case (.number(let a), .number(let b)):
            return a == b
        case (.string(let a), .string(let b)):
            return JSONValue.sameScalars(a, b)
        case (.array(let a), .array(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0 == $1 }
        case (.object(let a), .object(let b)):
            guard a.count == b.count else { return false }
            for (key, value) in a {
                guard let index = b.index(forKey: key) else { return false }
                let (otherKey, otherValue) = b[index]
                guard JSONValue.sameScalars(key, otherKey), value == otherValue else { return false }
            }
            return true
        default:
            return false
        }
    }

    /// Hashes the value consistently with `==` (exact equality implies Swift `String` equality).
    ///
    /// - Parameter hasher: The hasher to feed.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null:
            hasher.combine(0 as UInt8)
        case .bool(let value):
            hasher.combine(1 as UInt8)
            hasher.combine(value)
        case .number(let value):
            hasher.combine(2 as UInt8)
            hasher.combine(value)
        case .string(let value):
            hasher.combine(3 as UInt8)
            hasher.combine(value)
        case .array(let value):
            hasher.combine(4 as UInt8)
            hasher.combine(value)
        case .object(let value):
            hasher.combine(5 as UInt8)
            hasher.combine(value)
        }
    }

    /// Whether two strings consist of the same Unicode scalars (no canonical equivalence).
    static func sameScalars(_ a: String, _ b: String) -> Bool {
        a.utf8.elementsEqual(b.utf8)
    }
}
