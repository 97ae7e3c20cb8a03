// Literal conformances, mainly for tests and readable construction of fixed documents.

extension JSONValue: ExpressibleByNilLiteral {
    /// Creates `.null`.
    ///
    /// - Parameter nilLiteral: The `nil` literal.
    public init(nilLiteral: ()) {
        self = .null
    }
}

extension JSONValue: ExpressibleByBooleanLiteral {
    /// Creates `.bool`.
    ///
    /// - Parameter value: The Boolean literal.
    public init(booleanLiteral value: Bool) {
        self = .bool(value)
    }
}

extension JSONValue: ExpressibleByIntegerLiteral {
    /// Creates `.number` from an integer literal: its value is the nearest `Double`, its literal all the digits.
    ///
    /// - Parameter value: The integer literal.
    public init(integerLiteral value: Int) {
        self = .number(JSONNumber(value))
    }
}

extension JSONValue: ExpressibleByFloatLiteral {
    /// Creates `.number` from a floating-point literal.
    ///
    /// - Parameter value: The floating-point literal.
    public init(floatLiteral value: Double) {
        self = .number(value)
    }
}

extension JSONValue: ExpressibleByStringLiteral {
    /// Creates `.string`, keeping the literal's exact Unicode scalars.
    ///
    /// - Parameter value: The string literal.
    public init(stringLiteral value: String) {
        self = .string(value)
    }
}

extension JSONValue: ExpressibleByArrayLiteral {
    /// Creates `.array`.
    ///
    /// - Parameter elements: The array literal's elements.
    public init(arrayLiteral elements: JSONValue...) {
        self = .array(elements)
    }
}

extension JSONValue: ExpressibleByDictionaryLiteral {
    /// Creates `.object`; when a key repeats (or repeats up to Unicode canonical equivalence), the last wins.
    ///
    /// - Parameter elements: The dictionary literal's key-value pairs.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
