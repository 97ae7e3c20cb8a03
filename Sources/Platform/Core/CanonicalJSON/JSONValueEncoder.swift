/// Encodes `Encodable` values into a `JSONValue` tree (not into text; call `canonicalBytes()` for that).
///
/// Rules that keep the result valid I-JSON:
/// - integers become `.number(Double(x))`; an integer whose magnitude exceeds 2^53 would lose precision and is
///   refused with `EncodingError.invalidValue`;
/// - non-finite `Double`/`Float` values are refused with `EncodingError.invalidValue`;
/// - a `Float` is widened through its shortest decimal form (so `0.1 as Float` encodes as `0.1`) when that
///   widening reads back as the same `Float`, else exactly;
/// - `nil` optionals are omitted from keyed containers (the standard `encodeIfPresent` behaviour);
/// - a `JSONValue` nested in the value is stored as is.
///
/// Errors carry the coding path of the offending value.
public struct JSONValueEncoder: Sendable {
    /// Contextual information handed to `Encodable` implementations through `Encoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

    /// Creates an encoder.
    public init() {}

    /// Encodes a value.
    ///
    /// - Parameter value: The value to encode.
    /// - Returns: The JSON tree.
    /// - Throws: `EncodingError.invalidValue` for integers beyond ±2^53, non-finite floating-point values, a
    ///   top-level value that encodes nothing, and any error thrown by `value.encode(to:)`.
    public func encode<T: Encodable>(_ value: T) throws -> JSONValue {
        if let json = value as? JSONValue {
            return json
        }
        let node = EncodingNode()
        let encoder = ValueEncoder(node: node, codingPath: [], userInfo: userInfo)
        try value.encode(to: encoder)
        guard node.kind != .unset else {
            throw EncodingError.invalidValue(
                value,
                EncodingError.Context(
                    codingPath: [],
                    debugDescription: "Top-level \(T.self) did not encode any values."
                )
            )
        }
        return node.materialize()
    }
}

/// A JSON node under construction; containers share it by reference so nested containers can fill it later.
private final class EncodingNode {
    enum Kind {
        case unset, leaf, array, object
    }

    var kind: Kind = .unset
    var leaf: JSONValue = .null
    var elements: [EncodingNode] = []
    var members: [String: EncodingNode] = [:]

    init() {}

    init(leaf: JSONValue) {
        self.kind = .leaf
        self.leaf = leaf
    }

    func setLeaf(_ value: JSONValue) {
        kind = .leaf
        leaf = value
        elements = []
        members = [:]
    }

    /// Makes this node an array, keeping elements if it already is one.
    func becomeArray() {
        guard kind != .array else { return }
        kind = .array
        elements = []
        members = [:]
    }

    /// Makes this node an object, keeping members if it already is one.
    func becomeObject() {
        guard kind != .object else { return }
        kind = .object
        elements = []
        members = [:]
    }

    /// The finished tree; a nested value that encoded nothing becomes `{}`.
    func materialize() -> JSONValue {
        switch kind {
        case .unset: .object([:])
        case .leaf: leaf
        case .array: .array(elements.map { $0.materialize() })
        case .object: .object(members.mapValues { $0.materialize() })
        }
    }
}

/// Converts primitives to JSON leaves, enforcing the I-JSON number rules.
private enum Primitive {
    static func integer<T: BinaryInteger>(_ value: T, codingPath: [any CodingKey]) throws -> JSONValue {
        guard let magnitude = UInt64(exactly: value.magnitude), magnitude <= 1 << 53 else {
            throw EncodingError.invalidValue(
                value,
                EncodingError.Context(
                    codingPath: codingPath,
                    debugDescription: "Integer \(value) exceeds 2^53 in magnitude and cannot be represented exactly "
                        + "as a JSON number."
                )
            )
        }
        return .number(Double(value))
    }

    static func double(_ value: Double, codingPath: [any CodingKey]) throws -> JSONValue {
        guard value.isFinite else {
            throw EncodingError.invalidValue(
                value,
                EncodingError.Context(
                    codingPath: codingPath,
                    debugDescription: "Non-finite number \(value) cannot be encoded as a JSON number."
                )
            )
        }
        return .number(value)
    }

    static func float(_ value: Float, codingPath: [any CodingKey]) throws -> JSONValue {
        guard value.isFinite else {
            throw EncodingError.invalidValue(
                value,
                EncodingError.Context(
                    codingPath: codingPath,
                    debugDescription: "Non-finite number \(value) cannot be encoded as a JSON number."
                )
            )
        }
        if let widened = Double(value.description), Float(widened) == value {
            return .number(widened)
        }
        return .number(Double(value))
    }

    /// Encodes any value into a node, storing `JSONValue` as is.
    static func node<T: Encodable>(
        for value: T,
        codingPath: [any CodingKey],
        userInfo: [CodingUserInfoKey: any Sendable]
    ) throws -> EncodingNode {
        if let json = value as? JSONValue {
            return EncodingNode(leaf: json)
        }
        let node = EncodingNode()
        try value.encode(to: ValueEncoder(node: node, codingPath: codingPath, userInfo: userInfo))
        return node
    }
}

/// The `Encoder` handed to `Encodable` implementations; it is also its own single-value container.
private struct ValueEncoder: Encoder, SingleValueEncodingContainer {
    let node: EncodingNode
    let codingPath: [any CodingKey]
    let sendableUserInfo: [CodingUserInfoKey: any Sendable]

    init(node: EncodingNode, codingPath: [any CodingKey], userInfo: [CodingUserInfoKey: any Sendable]) {
        self.node = node
        self.codingPath = codingPath
        self.sendableUserInfo = userInfo
    }

    var userInfo: [CodingUserInfoKey: Any] { sendableUserInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        node.becomeObject()
        return KeyedEncodingContainer(
            KeyedValueEncoder<Key>(node: node, codingPath: codingPath, userInfo: sendableUserInfo)
        )
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        node.becomeArray()
        return UnkeyedValueEncoder(node: node, codingPath: codingPath, userInfo: sendableUserInfo)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        self
    }

    // MARK: SingleValueEncodingContainer

    mutating func encodeNil() throws { node.setLeaf(.null) }
    mutating func encode(_ value: Bool) throws { node.setLeaf(.bool(value)) }
    mutating func encode(_ value: String) throws { node.setLeaf(.string(value)) }
    mutating func encode(_ value: Double) throws { node.setLeaf(try Primitive.double(value, codingPath: codingPath)) }
    mutating func encode(_ value: Float) throws { node.setLeaf(try Primitive.float(value, codingPath: codingPath)) }
    mutating func encode(_ value: Int) throws { try encodeInteger(value) }
    mutating func encode(_ value: Int8) throws { try encodeInteger(value) }
    mutating func encode(_ value: Int16) throws { try encodeInteger(value) }
    mutating func encode(_ value: Int32) throws { try encodeInteger(value) }
    mutating func encode(_ value: Int64) throws { try encodeInteger(value) }
    mutating func encode(_ value: UInt) throws { try encodeInteger(value) }
    mutating func encode(_ value: UInt8) throws { try encodeInteger(value) }
    mutating func encode(_ value: UInt16) throws { try encodeInteger(value) }
    mutating func encode(_ value: UInt32) throws { try encodeInteger(value) }
    mutating func encode(_ value: UInt64) throws { try encodeInteger(value) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        if let json = value as? JSONValue {
            node.setLeaf(json)
        } else {
            try value.encode(to: self)
        }
    }

    private func encodeInteger<T: BinaryInteger>(_ value: T) throws {
        node.setLeaf(try Primitive.integer(value, codingPath: codingPath))
    }
}

private struct KeyedValueEncoder<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: EncodingNode
    let codingPath: [any CodingKey]
    let userInfo: [CodingUserInfoKey: any Sendable]

    private func set(_ value: JSONValue, for key: Key) {
        node.members[key.stringValue] = EncodingNode(leaf: value)
    }

    private func path(_ key: Key) -> [any CodingKey] {
        codingPath + [key]
    }

    mutating func encodeNil(forKey key: Key) throws { set(.null, for: key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { set(.bool(value), for: key) }
    mutating func encode(_ value: String, forKey key: Key) throws { set(.string(value), for: key) }

    mutating func encode(_ value: Double, forKey key: Key) throws {
        set(try Primitive.double(value, codingPath: path(key)), for: key)
    }

    mutating func encode(_ value: Float, forKey key: Key) throws {
        set(try Primitive.float(value, codingPath: path(key)), for: key)
    }

    mutating func encode(_ value: Int, forKey key: Key) throws { try encodeInteger(value, key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try encodeInteger(value, key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try encodeInteger(value, key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try encodeInteger(value, key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try encodeInteger(value, key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try encodeInteger(value, key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try encodeInteger(value, key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try encodeInteger(value, key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try encodeInteger(value, key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try encodeInteger(value, key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        node.members[key.stringValue] = try Primitive.node(for: value, codingPath: path(key), userInfo: userInfo)
    }

    private func encodeInteger<T: BinaryInteger>(_ value: T, _ key: Key) throws {
        set(try Primitive.integer(value, codingPath: path(key)), for: key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type,
        forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let child = EncodingNode()
        child.becomeObject()
        node.members[key.stringValue] = child
        return KeyedEncodingContainer(
            KeyedValueEncoder<NestedKey>(node: child, codingPath: path(key), userInfo: userInfo)
        )
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let child = EncodingNode()
        child.becomeArray()
        node.members[key.stringValue] = child
        return UnkeyedValueEncoder(node: child, codingPath: path(key), userInfo: userInfo)
    }

    mutating func superEncoder() -> any Encoder {
        superEncoder(named: JSONCodingKey.superKey)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        superEncoder(named: key)
    }

    private func superEncoder(named key: any CodingKey) -> any Encoder {
        let child = EncodingNode()
        node.members[key.stringValue] = child
        return ValueEncoder(node: child, codingPath: codingPath + [key], userInfo: userInfo)
    }
}

private struct UnkeyedValueEncoder: UnkeyedEncodingContainer {
    let node: EncodingNode
    let codingPath: [any CodingKey]
    let userInfo: [CodingUserInfoKey: any Sendable]

    var count: Int { node.elements.count }

    private var nextPath: [any CodingKey] {
        codingPath + [JSONCodingKey(intValue: node.elements.count)]
    }

    private func append(_ value: JSONValue) {
        node.elements.append(EncodingNode(leaf: value))
    }

    mutating func encodeNil() throws { append(.null) }
    mutating func encode(_ value: Bool) throws { append(.bool(value)) }
    mutating func encode(_ value: String) throws { append(.string(value)) }
    mutating func encode(_ value: Double) throws { append(try Primitive.double(value, codingPath: nextPath)) }
    mutating func encode(_ value: Float) throws { append(try Primitive.float(value, codingPath: nextPath)) }
    mutating func encode(_ value: Int) throws { try encodeInteger(value) }
    mutating func encode(_ value: Int8) throws { try encodeInteger(value) }
    mutating func encode(_ value: Int16) throws { try encodeInteger(value) }
    mutating func encode(_ value: Int32) throws { try encodeInteger(value) }
    mutating func encode(_ value: Int64) throws { try encodeInteger(value) }
    mutating func encode(_ value: UInt) throws { try encodeInteger(value) }
    mutating func encode(_ value: UInt8) throws { try encodeInteger(value) }
    mutating func encode(_ value: UInt16) throws { try encodeInteger(value) }
    mutating func encode(_ value: UInt32) throws { try encodeInteger(value) }
    mutating func encode(_ value: UInt64) throws { try encodeInteger(value) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let child = try Primitive.node(for: value, codingPath: nextPath, userInfo: userInfo)
        node.elements.append(child)
    }

    private func encodeInteger<T: BinaryInteger>(_ value: T) throws {
        append(try Primitive.integer(value, codingPath: nextPath))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        let path = nextPath
        let child = EncodingNode()
        child.becomeObject()
        node.elements.append(child)
        return KeyedEncodingContainer(KeyedValueEncoder<NestedKey>(node: child, codingPath: path, userInfo: userInfo))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let path = nextPath
        let child = EncodingNode()
        child.becomeArray()
        node.elements.append(child)
        return UnkeyedValueEncoder(node: child, codingPath: path, userInfo: userInfo)
    }

    mutating func superEncoder() -> any Encoder {
        let path = nextPath
        let child = EncodingNode()
        node.elements.append(child)
        return ValueEncoder(node: child, codingPath: path, userInfo: userInfo)
    }
}
