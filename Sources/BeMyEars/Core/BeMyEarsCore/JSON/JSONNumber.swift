/// A JSON number, kept as its literal text (RFC 8259 §6 grammar).
///
/// Keeping the text means the server forwards `1.50` as `1.50` and `12345678901234567890` without rounding it
/// through `Double`; two numbers are equal when their literals are.
public struct JSONNumber: Sendable, Hashable, CustomStringConvertible {
    /// The literal, e.g. `-12.5e3`; always valid JSON number syntax.
    public let literal: String

    /// Creates the number for an integer.
    public init(_ value: Int) {
        self.literal = String(value)
    }

    /// Creates the number for a finite `Double`, in Swift's shortest round-tripping form (e.g. `0.1`, `1e-05`);
    /// nil for infinities and NaN, which JSON cannot express.
    public init?(_ value: Double) {
        guard value.isFinite else { return nil }
        self.literal = value.description
    }

    /// Creates a number from JSON number syntax; nil when `literal` is not one (e.g. `01`, `1.`, `+1`, `NaN`).
    public init?(literal: String) {
        guard Self.isValidLiteral(Array(literal.utf8)[...]) else { return nil }
        self.literal = literal
    }

    /// Trusted constructor for the parser, which has already checked the grammar.
    init(validatedLiteral: String) {
        self.literal = validatedLiteral
    }

    /// The value as an `Int` when the literal is an integer in range, else nil.
    public var intValue: Int? { Int(literal) }

    /// The value as a `Double` (rounded as `Double` parsing rounds).
    public var doubleValue: Double { Double(literal) ?? .nan }

    public var description: String { literal }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    static func isValidLiteral(_ bytes: ArraySlice<UInt8>) -> Bool {
        var index = bytes.startIndex
        func peek() -> UInt8? { index < bytes.endIndex ? bytes[index] : nil }
        func digits() -> Int {
            let start = index
            while let byte = peek(), byte.isASCIIDigit { index += 1 }
            return index - start
        }
        if peek() == UInt8(ascii: "-") { index += 1 }
        guard let first = peek(), first.isASCIIDigit else { return false }
        if first == UInt8(ascii: "0") { index += 1 } else { _ = digits() }
        if peek() == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { return false }
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            index += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { return false }
        }
        return index == bytes.endIndex
    }
}

extension UInt8 {
    var isASCIIDigit: Bool { self >= UInt8(ascii: "0") && self <= UInt8(ascii: "9") }
}
