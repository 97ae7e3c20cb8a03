/// Decodes `Decodable` values from a `JSONValue` tree.
///
/// Rules:
/// - an integer type decodes only from a `.number` that is integral, at most 2^53 in magnitude (beyond that the
///   double may already have lost precision) and within the type's range; otherwise
///   `DecodingError.dataCorrupted`;
/// - `Float` decodes from any `.number` whose value fits in a `Float` range (rounded to nearest);
/// - optionals decode as `nil` when the key is missing or the value is `null`;
/// - a `JSONValue` nested in the target type receives the subtree as is;
/// - no type conversions: a string never decodes as a number, nor a number as a Boolean.
///
/// Errors carry the coding path of the offending value.
public struct JSONValueDecoder: Sendable {
    /// Contextual information handed to `Decodable` implementations through `Decoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

    /// Creates a decoder.
    public init() {}

    /// Decodes a value of the given type.
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - value: The JSON tree to decode from.
    /// - Returns: The decoded value.
    /// - Throws: `DecodingError` (with a coding path) when the tree does not match the type.
    public func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        try ValueDecoder(value: value, codingPath: [], userInfo: userInfo).unbox(T.self)
    }
}

/// The `Decoder` handed to `Decodable` implementations; it is also its own single-value container.
private struct ValueDecoder: Decoder, SingleValueDecodingContainer {
    let value: JSONValue
    let codingPath: [any CodingKey]
    let sendableUserInfo: [CodingUserInfoKey: any Sendable]

    init(value: JSONValue, codingPath: [any CodingKey], userInfo: [CodingUserInfoKey: any Sendable]) {
        self.value = value
        self.codingPath = codingPath
        self.sendableUserInfo = userInfo
    }

    var userInfo: [CodingUserInfoKey: Any] { sendableUserInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = value else {
            throw Unbox.mismatch([String: JSONValue].self, found: value, codingPath: codingPath)
        }
        return KeyedDecodingContainer(
            KeyedValueDecoder<Key>(members: members, codingPath: codingPath, userInfo: sendableUserInfo)
        )
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = value else {
            throw Unbox.mismatch([JSONValue].self, found: value, codingPath: codingPath)
        }
        return UnkeyedValueDecoder(elements: elements, codingPath: codingPath, userInfo: sendableUserInfo)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        self
    }

    /// Decodes `T` from this decoder's value, handing `JSONValue` over unchanged.
    func unbox<T: Decodable>(_ type: T.Type) throws -> T {
        if T.self == JSONValue.self, let json = value as? T {
            return json
        }
        return try T(from: self)
    }

    // MARK: SingleValueDecodingContainer

    func decodeNil() -> Bool { value.isNull }
    func decode(_ type: Bool.Type) throws -> Bool { try Unbox.bool(value, codingPath: codingPath) }
    func decode(_ type: String.Type) throws -> String { try Unbox.string(value, codingPath: codingPath) }
    func decode(_ type: Double.Type) throws -> Double { try Unbox.double(value, codingPath: codingPath) }
    func decode(_ type: Float.Type) throws -> Float { try Unbox.float(value, codingPath: codingPath) }
    func decode(_ type: Int.Type) throws -> Int { try Unbox.integer(value, codingPath: codingPath) }
    func decode(_ type: Int8.Type) throws -> Int8 { try Unbox.integer(value, codingPath: codingPath) }
    func decode(_ type: Int16.Type) throws -> Int16 { try Unbox.integer(value, codingPath: codingPath) }
    func decode(_ type: Int32.Type) throws -> Int32 { try Unbox.integer(value, codingPath: codingPath) }
    func decode(_ type: Int64.Type) throws -> Int64 { try Unbox.integer(value, codingPath: codingPath) }
    func decode(_ type: UInt.Type) throws -> UInt { try Unbox.integer(value, codingPath: codingPath) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try Unbox.integer(value, codingPath: codingPath) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try Unbox.integer(value, codingPath: codingPath) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try Unbox.integer(value, codingPath: codingPath) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try Unbox.integer(value, codingPath: codingPath) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try unbox(T.self) }
}

/// Converts JSON leaves to primitives, with standard `DecodingError`s.
private enum Unbox {
    static func bool(_ value: JSONValue, codingPath: [any CodingKey]) throws -> Bool {
        guard case .bool(let flag) = value else { throw mismatch(Bool.self, found: value, codingPath: codingPath) }
        return flag
    }

    static func string(_ value: JSONValue, codingPath: [any CodingKey]) throws -> String {
        guard case .string(let text) = value else {
            throw mismatch(String.self, found: value, codingPath: codingPath)
        }
        return text
    }

    static func double(_ value: JSONValue, codingPath: [any CodingKey]) throws -> Double {
        guard case .number(let number) = value else {
            throw mismatch(Double.self, found: value, codingPath: codingPath)
        }
        return number.doubleValue
    }

    static func float(_ value: JSONValue, codingPath: [any CodingKey]) throws -> Float {
        let number = try double(value, codingPath: codingPath)
        let narrowed = Float(number)
        guard narrowed.isFinite || !number.isFinite else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: codingPath,
                    debugDescription: "Number \(CanonicalJSON.formatNumber(number)) does not fit in Float."
                )
            )
        }
        return narrowed
    }

    static func integer<T: FixedWidthInteger>(_ value: JSONValue, codingPath: [any CodingKey]) throws -> T {
        let number = try double(value, codingPath: codingPath)
        let shown = CanonicalJSON.formatNumber(number)
        guard number.isFinite, number.rounded(.towardZero) == number else {
            throw corrupted("Number \(shown) is not an integer, so it cannot be decoded as \(T.self).", codingPath)
        }
        guard number.magnitude <= 9_007_199_254_740_992 else {
            throw corrupted(
                "Number \(shown) exceeds 2^53 in magnitude and may have lost precision; not decoded as \(T.self).",
                codingPath
            )
        }
        guard let integer = T(exactly: number) else {
            throw corrupted("Number \(shown) does not fit in \(T.self).", codingPath)
        }
        return integer
    }

    static func corrupted(_ message: String, _ codingPath: [any CodingKey]) -> DecodingError {
        DecodingError.dataCorrupted(DecodingError.Context(codingPath: codingPath, debugDescription: message))
    }

    /// `valueNotFound` for `null`, `typeMismatch` for anything else.
    static func mismatch(_ expected: Any.Type, found value: JSONValue, codingPath: [any CodingKey]) -> DecodingError {
        let kind: String
        switch value {
        case .null:
            return DecodingError.valueNotFound(
                expected,
                DecodingError.Context(
                    codingPath: codingPath,
                    debugDescription: "Expected \(expected) value but found null instead."
                )
            )
        case .bool: kind = "a Boolean"
        case .number: kind = "a number"
        case .string: kind = "a string"
        case .array: kind = "an array"
        case .object: kind = "an object"
        }
        return DecodingError.typeMismatch(
            expected,
            DecodingError.Context(
                codingPath: codingPath,
                debugDescription: "Expected to decode \(expected) but found \(kind) instead."
            )
        )
    }
}

private struct KeyedValueDecoder<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let members: [String: JSONValue]
    let codingPath: [any CodingKey]
    let userInfo: [CodingUserInfoKey: any Sendable]

    var allKeys: [Key] {
        members.keys.compactMap { Key(stringValue: $0) }
    }

    func contains(_ key: Key) -> Bool {
        members[key.stringValue] != nil
    }

    private func decoder(for key: any CodingKey) throws -> ValueDecoder {
        guard let value = members[key.stringValue] else {
            throw DecodingError.keyNotFound(
                key,
                DecodingError.Context(
                    codingPath: codingPath,
                    debugDescription: "No value associated with key \"\(key.stringValue)\"."
                )
            )
        }
        return ValueDecoder(value: value, codingPath: codingPath + [key], userInfo: userInfo)
    }

    func decodeNil(forKey key: Key) throws -> Bool { try decoder(for: key).decodeNil() }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try decoder(for: key).decode(type) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try decoder(for: key).decode(type) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try decoder(for: key).decode(type) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try decoder(for: key).decode(type) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try decoder(for: key).decode(type) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try decoder(for: key).decode(type) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try decoder(for: key).decode(type) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try decoder(for: key).decode(type) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try decoder(for: key).decode(type) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try decoder(for: key).decode(type) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try decoder(for: key).decode(type) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try decoder(for: key).decode(type) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try decoder(for: key).decode(type) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try decoder(for: key).decode(type) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try decoder(for: key).unbox(type) }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type,
        forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try decoder(for: key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try decoder(for: key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        superDecoder(named: JSONCodingKey.superKey)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        superDecoder(named: key)
    }

    /// A decoder for the member `key`, or for `null` when it is missing (as Foundation does).
    private func superDecoder(named key: any CodingKey) -> any Decoder {
        ValueDecoder(value: members[key.stringValue] ?? .null, codingPath: codingPath + [key], userInfo: userInfo)
    }
}

private struct UnkeyedValueDecoder: UnkeyedDecodingContainer {
    let elements: [JSONValue]
    let codingPath: [any CodingKey]
    let userInfo: [CodingUserInfoKey: any Sendable]
    private(set) var currentIndex = 0

    init(elements: [JSONValue], codingPath: [any CodingKey], userInfo: [CodingUserInfoKey: any Sendable]) {
        self.elements = elements
        self.codingPath = codingPath
        self.userInfo = userInfo
    }

    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    /// A decoder for the current element; the index advances only after a successful decode.
    private func current(_ type: Any.Type) throws -> ValueDecoder {
        let path = codingPath + [JSONCodingKey(intValue: currentIndex)]
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                type,
                DecodingError.Context(codingPath: path, debugDescription: "Unkeyed container is at end.")
            )
        }
        return ValueDecoder(value: elements[currentIndex], codingPath: path, userInfo: userInfo)
    }

    private mutating func next<T>(_ type: T.Type, _ body: (ValueDecoder) throws -> T) throws -> T {
        let result = try body(try current(type))
        currentIndex += 1
        return result
    }

    mutating func decodeNil() throws -> Bool {
        guard try current(Never.self).decodeNil() else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: String.Type) throws -> String { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: Double.Type) throws -> Double { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: Float.Type) throws -> Float { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: Int.Type) throws -> Int { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next(type) { try $0.decode(type) } }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next(type) { try $0.unbox(type) } }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try next(KeyedDecodingContainer<NestedKey>.self) { try $0.container(keyedBy: type) }
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try next((any UnkeyedDecodingContainer).self) { try $0.unkeyedContainer() }
    }

    mutating func superDecoder() throws -> any Decoder {
        try next((any Decoder).self) { $0 }
    }
}
