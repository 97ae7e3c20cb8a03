/// A JSON number: its value as a `Double`, and the text it was written as.
///
/// `doubleValue` is what RFC 8785 works with: canonical serialization formats it (ECMAScript `Number::toString`),
/// and equality and hashing compare it, so `0`, `-0`, `0.0` and `0e5` are equal numbers, as are two literals that
/// round to the same double. `literal` is the text a parsed number was written as; the literal serialization
/// (`JSONValue.serialized`, `serialize(into:)`) writes it, so a document that is only forwarded keeps exactly the
/// numbers its sender wrote (`1.50`, `-0`, `12345678901234567890123`). Compare literals, not numbers, when the
/// spelling matters.
///
/// A number made from a value has no source text: its literal is its canonical form. A non-finite `Double` (which
/// JSON cannot express and the parser never produces) is written as `null` by both serializations, as
/// ECMAScript's `JSON.stringify` does.
public struct JSONNumber: Sendable, CustomStringConvertible {
    /// The number correctly rounded to a `Double` (`1e-400` is 0; a literal beyond the double range, which only
    /// `JSONParser.NumberRange.unlimited` accepts, is infinite).
    public let doubleValue: Double
    /// The parsed text, or `nil` when the number was made from a value and its literal is its canonical form.
    let text: String?

    /// The number for a `Double`, written in its canonical (ECMAScript) form, e.g. `0.1`, `1e+21`, `1e-7`.
    ///
    /// - Parameter value: Any double; a non-finite one is written as `null`.
    public init(_ value: Double) {
        self.doubleValue = value
        self.text = nil
    }

    /// The number for an integer, written with all its digits (also beyond 2^53, where `doubleValue` rounds).
    ///
    /// - Parameter value: The integer.
    public init(_ value: Int) {
        self.doubleValue = Double(value)
        // Up to 2^53 the double is exact and its canonical form is the integer's digits.
        self.text = value.magnitude <= 1 << 53 ? nil : String(value)
    }

    /// The number spelled by `literal`, or `nil` when `literal` is not exactly one RFC 8259 number (`01`, `1.`,
    /// `+1`, `NaN`, `1 ` are not). Any magnitude is accepted: `1e400` keeps its literal.
    ///
    /// - Parameter literal: The number's text.
    public init?(literal: String) {
        guard let number = JSONParserEngine.number(spelledBy: literal) else { return nil }
        self = number
    }

    /// A number read by the parser: `literal` follows the grammar and `doubleValue` is its rounding.
    init(doubleValue: Double, literal: String) {
        self.doubleValue = doubleValue
        self.text = literal
    }

    /// The number's text: as parsed, else its canonical form (`null` for a non-finite value).
    public var literal: String {
        if let text {
            return text
        }
        return doubleValue.isFinite ? NumberFormatting.ecmaScriptString(doubleValue) : "null"
    }

    /// The value as an `Int` when the literal is an integer (no fraction, no exponent) within `Int`'s range.
    public var intValue: Int? {
        guard let text else {
            // The canonical form is plain digits exactly when the double is integral and below 1e21.
            return Int(exactly: doubleValue)
        }
        return Int(text)
    }

    /// The literal.
    public var description: String { literal }
}

extension JSONNumber: Hashable {
    /// Numeric equality of the doubles (`0 == -0`, and NaN equals NaN so that equality stays reflexive);
    /// literals are not compared.
    ///
    /// - Parameters:
    ///   - lhs: A number.
    ///   - rhs: Another number.
    /// - Returns: `true` when both have the same `doubleValue`, hence the same canonical serialization.
    public static func == (lhs: JSONNumber, rhs: JSONNumber) -> Bool {
        lhs.doubleValue == rhs.doubleValue || (lhs.doubleValue.isNaN && rhs.doubleValue.isNaN)
    }

    /// Hashes the double consistently with `==` (`Double` hashing already merges `0` and `-0`).
    ///
    /// - Parameter hasher: The hasher to feed.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(doubleValue.isNaN ? Double.nan : doubleValue)
    }
}
