// The serializers: the RFC 8785 §3.2 canonical form, and the literal form that keeps numbers as they were written.

extension JSONValue {
    /// The RFC 8785 canonical serialization of this value: no whitespace, object members sorted by their
    /// names' UTF-16 code units, minimal string escaping, ECMAScript number formatting of each number's double.
    ///
    /// A `.number` holding a non-finite double (which the parser never produces) is written as `null`,
    /// as ECMAScript's `JSON.stringify` does. Nesting is serialized recursively; parsed values are bounded by
    /// `JSONParser.Limits.maxDepth`.
    ///
    /// - Returns: UTF-8 bytes without a trailing newline.
    public func canonicalBytes() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        CanonicalJSON.appendValue(self, style: .canonical, to: &out)
        return out
    }

    /// The canonical serialization (see `canonicalBytes()`) as a string.
    public var canonicalString: String {
        String(decoding: canonicalBytes(), as: UTF8.self)
    }

    /// Appends the literal serialization of this value: compact like the canonical form and with the same string
    /// escaping, but every number is written as its literal (`JSONNumber.literal`, the text it was parsed from)
    /// and object members are sorted by the bytes of their names' UTF-8 form.
    ///
    /// Parsing a document and serializing it this way reproduces each number exactly as it was written, so a
    /// payload that is only forwarded reaches its recipient with the sender's numbers. The output is
    /// deterministic (the same value always gives the same bytes), but numerically equal values whose literals
    /// differ (`1` and `1.0`) give different bytes.
    ///
    /// - Parameter out: The buffer to append the UTF-8 bytes to.
    public func serialize(into out: inout [UInt8]) {
        CanonicalJSON.appendValue(self, style: .literal, to: &out)
    }

    /// The literal serialization (see `serialize(into:)`) as a string.
    public var serialized: String {
        var out: [UInt8] = []
        serialize(into: &out)
        return String(decoding: out, as: UTF8.self)
    }
}

extension CanonicalJSON {
    /// How `appendValue` writes numbers and orders members.
    enum Style {
        /// RFC 8785: numbers formatted from their doubles, members in UTF-16 order.
        case canonical
        /// Numbers as their literals, members in UTF-8 byte order.
        case literal
    }

    static func appendValue(_ value: JSONValue, style: Style, to out: inout [UInt8]) {
        switch value {
        case .null:
            out.append(contentsOf: "null".utf8)
        case .bool(let flag):
            out.append(contentsOf: (flag ? "true" : "false").utf8)
        case .number(let number):
            if style == .literal, let text = number.text {
                out.append(contentsOf: text.utf8)
            } else if number.doubleValue.isFinite {
                NumberFormatting.append(number.doubleValue, to: &out)
            } else {
                out.append(contentsOf: "null".utf8)
            }
        case .string(let text):
            appendString(text, to: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 {
                    out.append(UInt8(ascii: ","))
                }
                appendValue(element, style: style, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            let sorted =
                switch style {
                case .canonical: sortedMembers(members)
                case .literal: members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
                }
            for (index, member) in sorted.enumerated() {
                if index > 0 {
                    out.append(UInt8(ascii: ","))
                }
                appendString(member.key, to: &out)
                out.append(UInt8(ascii: ":"))
                appendValue(member.value, style: style, to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// Members ordered by their names as arrays of UTF-16 code units (RFC 8785 §3.2.3).
    static func sortedMembers(_ members: [String: JSONValue]) -> [(key: String, value: JSONValue)] {
        var entries: [(key: String, value: JSONValue)] = []
        entries.reserveCapacity(members.count)
        var sortKeys: [[UInt16]] = []
        sortKeys.reserveCapacity(members.count)
        for member in members {
            entries.append(member)
            sortKeys.append(Array(member.key.utf16))
        }
        var order = Array(entries.indices)
        order.sort { precedesInUTF16(sortKeys[$0], sortKeys[$1]) }
        return order.map { entries[$0] }
    }

    /// Lexicographic order of UTF-16 code unit arrays (a proper prefix sorts first).
    private static func precedesInUTF16(_ lhs: [UInt16], _ rhs: [UInt16]) -> Bool {
        let common = min(lhs.count, rhs.count)
        var index = 0
        while index < common {
            if lhs[index] != rhs[index] {
                return lhs[index] < rhs[index]
            }
            index += 1
        }
        return lhs.count < rhs.count
    }

    /// Appends `text` as a JSON string literal: only `"`, `\` and controls below U+0020 are escaped, using the
    /// two-character forms where JSON has them and lowercase `\u00xx` otherwise; all else is raw UTF-8.
    static func appendString(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""):
                out.append(UInt8(ascii: "\\"))
                out.append(UInt8(ascii: "\""))
            case UInt8(ascii: "\\"):
                out.append(UInt8(ascii: "\\"))
                out.append(UInt8(ascii: "\\"))
            case 0x08:
                out.append(UInt8(ascii: "\\"))
                out.append(UInt8(ascii: "b"))
            case 0x09:
                out.append(UInt8(ascii: "\\"))
                out.append(UInt8(ascii: "t"))
            case 0x0A:
                out.append(UInt8(ascii: "\\"))
                out.append(UInt8(ascii: "n"))
            case 0x0C:
                out.append(UInt8(ascii: "\\"))
                out.append(UInt8(ascii: "f"))
            case 0x0D:
                out.append(UInt8(ascii: "\\"))
                out.append(UInt8(ascii: "r"))
            case 0x00..<0x20:
                out.append(contentsOf: "\\u00".utf8)
                out.append(lowercaseHexDigit(byte >> 4))
                out.append(lowercaseHexDigit(byte & 0x0F))
            default:
                out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// The ASCII lowercase hex digit for a value below 16.
    private static func lowercaseHexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + (nibble - 10)
    }
}
