/// ECMAScript `Number::toString(x)` for radix 10 (ECMA-262, section "Number::toString"), as RFC 8785 §3.2.2.3
/// requires for serializing numbers.
///
/// The shortest round-tripping decimal digits come from Swift's `Double.description`, which prints the
/// shortest digit string that reads back as the same double and, among several, the one closest to the exact
/// binary value — the same digits ECMAScript requires. This type only re-arranges those digits into the
/// ECMAScript layout.
enum NumberFormatting {
    /// The ECMAScript string for `value` (`"NaN"`, `"Infinity"` and `"-Infinity"` for non-finite values).
    static func ecmaScriptString(_ value: Double) -> String {
        var bytes: [UInt8] = []
        append(value, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the ECMAScript string for `value` as ASCII bytes.
    static func append(_ value: Double, to out: inout [UInt8]) {
        if value.isNaN {
            out.append(contentsOf: "NaN".utf8)
            return
        }
        if value == 0 {
            out.append(UInt8(ascii: "0"))  // both +0 and -0
            return
        }
        if value < 0 {
            out.append(UInt8(ascii: "-"))
        }
        let magnitude = value.magnitude
        if magnitude.isInfinite {
            out.append(contentsOf: "Infinity".utf8)
            return
        }
        let (digits, n) = shortestDigits(magnitude)
        appendLayout(digits: digits, n: n, to: &out)
    }

    /// The shortest round-trip decimal digits `s` (as ASCII, no leading or trailing zeros) and the exponent `n`
    /// such that `value == 0.s × 10^n`, for a finite positive `value`.
    static func shortestDigits(_ value: Double) -> (digits: [UInt8], n: Int) {
        var digits: [UInt8] = []
        digits.reserveCapacity(17)
        var pointPosition: Int?
        var exponent = 0
        var exponentNegative = false
        var inExponent = false
        for byte in value.description.utf8 {
            if inExponent {
                switch byte {
                case UInt8(ascii: "-"): exponentNegative = true
                case UInt8(ascii: "+"): break
                default: exponent = exponent * 10 + Int(byte &- UInt8(ascii: "0"))
                }
            } else if byte == UInt8(ascii: ".") {
                pointPosition = digits.count
            } else if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
                inExponent = true
            } else {
                digits.append(byte)
            }
        }
        if exponentNegative {
            exponent = -exponent
        }
        var n = (pointPosition ?? digits.count) + exponent
        let leadingZeros = digits.prefix(while: { $0 == UInt8(ascii: "0") }).count
        digits.removeFirst(leadingZeros)
        n -= leadingZeros
        while digits.last == UInt8(ascii: "0") {
            digits.removeLast()
        }
        return (digits, n)
    }

    /// Steps 6-10 of Number::toString: lays out digits `s` (k of them) with decimal exponent `n`.
    private static func appendLayout(digits: [UInt8], n: Int, to out: inout [UInt8]) {
        let k = digits.count
        if k <= n && n <= 21 {
            out.append(contentsOf: digits)
            out.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: n - k))
        } else if 0 < n && n <= 21 {
            out.append(contentsOf: digits[..<n])
            out.append(UInt8(ascii: "."))
            out.append(contentsOf: digits[n...])
        } else if -6 < n && n <= 0 {
            out.append(UInt8(ascii: "0"))
            out.append(UInt8(ascii: "."))
            out.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: -n))
            out.append(contentsOf: digits)
        } else {
            out.append(digits[0])
            if k > 1 {
                out.append(UInt8(ascii: "."))
                out.append(contentsOf: digits[1...])
            }
            out.append(UInt8(ascii: "e"))
            let e = n - 1
            out.append(e >= 0 ? UInt8(ascii: "+") : UInt8(ascii: "-"))
            out.append(contentsOf: String(e.magnitude).utf8)
        }
    }
}
