/// The byte-level state machine behind `JSONParser`.
///
/// Containers are tracked on an explicit stack, so nesting depth never turns into call depth. Every byte is
/// looked at a bounded number of times, so parsing is linear in the input length.
struct JSONParserEngine {
    /// One open array or object.
    private struct Frame {
        /// Below this many members, a key is looked up by comparing it with each member name.
        static let smallObjectLimit = 8

        var isObject: Bool
        var elements: [JSONValue] = []
        var members: [String: JSONValue] = [:]
        var pendingKey: String = ""

        /// The member name already present that equals `key` (by `String` equality, as `Dictionary` compares
        /// keys), if any. Comparing with a few names costs less than hashing `key` once more.
        func existingKey(equalTo key: String) -> String? {
            if members.count < Frame.smallObjectLimit {
                return members.keys.first { $0 == key }
            }
            return members.index(forKey: key).map { members[$0].key }
        }

        /// Adds `value` under `pendingKey`.
        mutating func addMember(_ value: JSONValue) {
            if members.count == 1 {
                // Grow once for a typical object rather than rehashing at 2, 4 and 7 members.
                members.reserveCapacity(Frame.smallObjectLimit)
            }
            members[pendingKey] = value
        }
    }

    /// The input bytes, addressed by offsets counted from its first byte.
    private let input: Input
    private let maxDepth: Int
    private let numberRange: JSONParser.NumberRange
    private var position = 0
    /// Reused buffer for strings that contain escapes.
    private var scratch: [UInt8] = []

    init(input: ArraySlice<UInt8>, maxDepth: Int, numberRange: JSONParser.NumberRange) {
        self.input = Input(input)
        self.maxDepth = maxDepth
        self.numberRange = numberRange
    }

    // MARK: - Document and values

    mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        if input.count >= 3, input[0] == 0xEF, input[1] == 0xBB, input[2] == 0xBF {
            throw JSONParseError(
                code: .unexpectedCharacter,
                offset: 0,
                message: "byte order mark (U+FEFF) at byte 0 is not allowed"
            )
        }
        let value = try parseValueTree()
        skipWhitespace()
        if position < input.count {
            throw JSONParseError(
                code: .trailingData,
                offset: position,
                message: "unexpected \(describeByte(at: position)) after the top-level value at byte \(position)"
            )
        }
        return value
    }

    private mutating func parseValueTree() throws(JSONParseError) -> JSONValue {
        // The innermost open container, and those around it: a document without nesting needs no stack.
        var current: Frame?
        var enclosing: [Frame] = []
        func open(_ frame: Frame) {
            if let outer = current {
                enclosing.append(outer)
            }
            current = frame
        }
        nextValue: while true {
            skipWhitespace()
            guard position < input.count else {
                throw endError(expected: "a value")
            }
            var value: JSONValue
            switch input[position] {
            case UInt8(ascii: "{"):
                try checkDepth(enclosing.count + (current == nil ? 0 : 1))
                position += 1
                skipWhitespace()
                if position < input.count, input[position] == UInt8(ascii: "}") {
                    position += 1
                    value = .object([:])
                } else {
                    var frame = Frame(isObject: true)
                    try readMemberName(into: &frame)
                    open(frame)
                    continue nextValue
                }
            case UInt8(ascii: "["):
                try checkDepth(enclosing.count + (current == nil ? 0 : 1))
                position += 1
                skipWhitespace()
                if position < input.count, input[position] == UInt8(ascii: "]") {
                    position += 1
                    value = .array([])
                } else {
                    open(Frame(isObject: false))
                    continue nextValue
                }
            case UInt8(ascii: "\""):
                value = .string(try parseString())
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                value = .number(try parseNumber())
            case UInt8(ascii: "t"):
                try expectLiteral("true")
                value = .bool(true)
            case UInt8(ascii: "f"):
                try expectLiteral("false")
                value = .bool(false)
            case UInt8(ascii: "n"):
                try expectLiteral("null")
                value = .null
            default:
                throw unexpectedError(expected: "a value")
            }

            // Attach the finished value to the enclosing containers, closing as many as end here.
            while current != nil {
                skipWhitespace()
                if current!.isObject {
                    current!.addMember(value)
                    guard position < input.count else { throw endError(expected: "',' or '}'") }
                    switch input[position] {
                    case UInt8(ascii: ","):
                        position += 1
                        skipWhitespace()
                        try readMemberName(into: &current!)
                        continue nextValue
                    case UInt8(ascii: "}"):
                        position += 1
                        value = .object(current!.members)
                        current = enclosing.popLast()
                    default:
                        throw unexpectedError(expected: "',' or '}'")
                    }
                } else {
                    current!.elements.append(value)
                    guard position < input.count else { throw endError(expected: "',' or ']'") }
                    switch input[position] {
                    case UInt8(ascii: ","):
                        position += 1
                        continue nextValue
                    case UInt8(ascii: "]"):
                        position += 1
                        value = .array(current!.elements)
                        current = enclosing.popLast()
                    default:
                        throw unexpectedError(expected: "',' or ']'")
                    }
                }
            }
            return value
        }
    }

    private func checkDepth(_ openContainers: Int) throws(JSONParseError) {
        guard openContainers < maxDepth else {
            throw JSONParseError(
                code: .tooDeep,
                offset: position,
                message: "nesting deeper than the limit of \(maxDepth) at byte \(position)"
            )
        }
    }

    /// Reads `"name"` and `:`, rejecting a name already present in the frame.
    private mutating func readMemberName(into frame: inout Frame) throws(JSONParseError) {
        guard position < input.count else { throw endError(expected: "a member name") }
        guard input[position] == UInt8(ascii: "\"") else {
            throw unexpectedError(expected: "a member name string")
        }
        let keyOffset = position
        let key = try parseString()
        if let earlier = frame.existingKey(equalTo: key) {
            let shown = JSONParserEngine.quoted(key)
            if JSONValue.sameScalars(earlier, key) {
                throw JSONParseError(
                    code: .duplicateKey,
                    offset: keyOffset,
                    message: "duplicate key \(shown) at byte \(keyOffset)"
                )
            }
            let scalars = JSONParserEngine.scalarList(key)
            let earlierShown = JSONParserEngine.quoted(earlier)
            let earlierScalars = JSONParserEngine.scalarList(earlier)
            throw JSONParseError(
                code: .duplicateKey,
                offset: keyOffset,
                message: "duplicate key \(shown) (\(scalars)) at byte \(keyOffset): it is canonically equivalent "
                    + "to the earlier key \(earlierShown) (\(earlierScalars)), and such keys are not supported"
            )
        }
        skipWhitespace()
        guard position < input.count else { throw endError(expected: "':'") }
        guard input[position] == UInt8(ascii: ":") else { throw unexpectedError(expected: "':'") }
        position += 1
        frame.pendingKey = key
    }

    private mutating func expectLiteral(_ literal: String) throws(JSONParseError) {
        for expected in literal.utf8 {
            guard position < input.count else { throw endError(expected: "'\(literal)'") }
            guard input[position] == expected else { throw unexpectedError(expected: "'\(literal)'") }
            position += 1
        }
    }

    private mutating func skipWhitespace() {
        position = input.endOfWhitespace(from: position)
    }

    // MARK: - Strings

    /// Parses a string whose opening quote is at `position`.
    private mutating func parseString() throws(JSONParseError) -> String {
        let quoteOffset = position
        position += 1
        let contentStart = position
        while true {
            position = input.endOfPlainStringRun(from: position)
            guard position < input.count else { break }
            let byte = input[position]
            if byte == UInt8(ascii: "\"") {
                let text = String(decoding: input[contentStart..<position], as: UTF8.self)
                position += 1
                return text
            } else if byte == UInt8(ascii: "\\") {
                return try parseEscapedString(from: contentStart, quoteOffset: quoteOffset)
            } else if byte < 0x20 {
                throw controlCharacterError()
            } else {
                // A plain run stops only at a quote, a backslash, a control or a non-ASCII lead byte.
                position += try validatedSequenceLength()
            }
        }
        throw unterminatedStringError(quoteOffset)
    }

    /// Continues a string at its first backslash, decoding into `scratch`.
    private mutating func parseEscapedString(
        from contentStart: Int,
        quoteOffset: Int
    ) throws(JSONParseError) -> String {
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: input[contentStart..<position])
        while position < input.count {
            // Copy plain ASCII runs between escapes in one go.
            let runEnd = input.endOfPlainStringRun(from: position)
            if runEnd > position {
                scratch.append(contentsOf: input[position..<runEnd])
                position = runEnd
                guard position < input.count else { break }
            }
            let byte = input[position]
            if byte == UInt8(ascii: "\"") {
                position += 1
                return String(decoding: scratch, as: UTF8.self)
            } else if byte == UInt8(ascii: "\\") {
                try decodeEscape()
            } else if byte < 0x20 {
                throw controlCharacterError()
            } else {
                let length = try validatedSequenceLength()
                scratch.append(contentsOf: input[position..<(position + length)])
                position += length
            }
        }
        throw unterminatedStringError(quoteOffset)
    }

    /// Decodes the escape whose backslash is at `position` and appends its UTF-8 to `scratch`.
    private mutating func decodeEscape() throws(JSONParseError) {
        let escapeOffset = position
        guard position + 1 < input.count else {
            throw JSONParseError(
                code: .unexpectedEnd,
                offset: input.count,
                message: "input ends at byte \(input.count) inside the escape sequence that starts "
                    + "at byte \(escapeOffset)"
            )
        }
        let replacement: UInt8
        switch input[position + 1] {
        case UInt8(ascii: "\""): replacement = UInt8(ascii: "\"")
        case UInt8(ascii: "\\"): replacement = UInt8(ascii: "\\")
        case UInt8(ascii: "/"): replacement = UInt8(ascii: "/")
        case UInt8(ascii: "b"): replacement = 0x08
        case UInt8(ascii: "f"): replacement = 0x0C
        case UInt8(ascii: "n"): replacement = 0x0A
        case UInt8(ascii: "r"): replacement = 0x0D
        case UInt8(ascii: "t"): replacement = 0x09
        case UInt8(ascii: "u"):
            try decodeUnicodeEscape()
            return
        default:
            throw JSONParseError(
                code: .invalidEscape,
                offset: escapeOffset,
                message: "invalid escape sequence at byte \(escapeOffset): backslash followed by "
                    + describeByte(at: position + 1)
            )
        }
        scratch.append(replacement)
        position += 2
    }

    /// Decodes `\uXXXX` (and its `\uXXXX` low-surrogate partner) at `position`.
    private mutating func decodeUnicodeEscape() throws(JSONParseError) {
        let escapeOffset = position
        let unit = try readHex4(at: position + 2, escapeOffset: escapeOffset)
        position += 6
        var scalar = UInt32(unit)
        switch unit {
        case 0xD800...0xDBFF:
            let pairFollows =
                position + 1 < input.count
                && input[position] == UInt8(ascii: "\\") && input[position + 1] == UInt8(ascii: "u")
            guard pairFollows else {
                throw loneSurrogateError(unit, at: escapeOffset, detail: "high surrogate not followed by a \\u escape")
            }
            let low = try readHex4(at: position + 2, escapeOffset: position)
            guard (0xDC00...0xDFFF).contains(low) else {
                throw loneSurrogateError(
                    unit,
                    at: escapeOffset,
                    detail: "high surrogate not followed by a low surrogate"
                )
            }
            scalar = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
            position += 6
        case 0xDC00...0xDFFF:
            throw loneSurrogateError(unit, at: escapeOffset, detail: "low surrogate without a preceding high surrogate")
        default:
            break
        }
        JSONParserEngine.appendUTF8(scalar, to: &scratch)
    }

    private func readHex4(at start: Int, escapeOffset: Int) throws(JSONParseError) -> UInt16 {
        var unit: UInt16 = 0
        for index in start..<(start + 4) {
            guard index < input.count else {
                throw JSONParseError(
                    code: .unexpectedEnd,
                    offset: input.count,
                    message: "input ends at byte \(input.count) inside the \\u escape that starts "
                        + "at byte \(escapeOffset)"
                )
            }
            let byte = input[index]
            let nibble: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = byte - UInt8(ascii: "A") + 10
            default:
                throw JSONParseError(
                    code: .invalidEscape,
                    offset: escapeOffset,
                    message: "invalid \\u escape at byte \(escapeOffset): expected four hex digits, found "
                        + "\(describeByte(at: index)) at byte \(index)"
                )
            }
            unit = unit << 4 | UInt16(nibble)
        }
        return unit
    }

    static func appendUTF8(_ scalar: UInt32, to bytes: inout [UInt8]) {
        switch scalar {
        case 0..<0x80:
            bytes.append(UInt8(scalar))
        case 0x80..<0x800:
            bytes.append(0xC0 | UInt8(scalar >> 6))
            bytes.append(0x80 | UInt8(scalar & 0x3F))
        case 0x800..<0x10000:
            bytes.append(0xE0 | UInt8(scalar >> 12))
            bytes.append(0x80 | UInt8((scalar >> 6) & 0x3F))
            bytes.append(0x80 | UInt8(scalar & 0x3F))
        default:
            bytes.append(0xF0 | UInt8(scalar >> 18))
            bytes.append(0x80 | UInt8((scalar >> 12) & 0x3F))
            bytes.append(0x80 | UInt8((scalar >> 6) & 0x3F))
            bytes.append(0x80 | UInt8(scalar & 0x3F))
        }
    }

    // MARK: - UTF-8

    /// The length of the well-formed multi-byte UTF-8 sequence at `position` (Unicode Table 3-7).
    private func validatedSequenceLength() throws(JSONParseError) -> Int {
        guard let length = wellFormedSequenceLength(at: position) else {
            throw JSONParseError(
                code: .invalidUTF8,
                offset: position,
                message: "invalid UTF-8 sequence starting with byte 0x\(JSONParserEngine.hex(input[position])) "
                    + "at byte \(position)"
            )
        }
        return length
    }

    /// The length of the well-formed UTF-8 sequence at `start`, or `nil` when it is ill-formed.
    private func wellFormedSequenceLength(at start: Int) -> Int? {
        let lead = input[start]
        let length: Int
        var secondRange: ClosedRange<UInt8> = 0x80...0xBF
        switch lead {
        case 0x00...0x7F: return 1
        case 0xC2...0xDF: length = 2
        case 0xE0:
            length = 3
            secondRange = 0xA0...0xBF
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED:
            length = 3
            secondRange = 0x80...0x9F
        case 0xF0:
            length = 4
            secondRange = 0x90...0xBF
        case 0xF1...0xF3: length = 4
        case 0xF4:
            length = 4
            secondRange = 0x80...0x8F
        default: return nil
        }
        guard start + length <= input.count, secondRange.contains(input[start + 1]) else { return nil }
        for index in (start + 2)..<(start + length) where !(0x80...0xBF).contains(input[index]) {
            return nil
        }
        return length
    }

    // MARK: - Numbers

    /// Parses a number starting at `position` (a `-` or a digit) following the RFC 8259 grammar exactly, keeping
    /// its literal.
    private mutating func parseNumber() throws(JSONParseError) -> JSONNumber {
        let start = position
        let negative = input[position] == UInt8(ascii: "-")
        if negative {
            position += 1
        }
        try requireDigit(after: "'-'")
        let integerStart = position
        if input[position] == UInt8(ascii: "0") {
            position += 1
            if position < input.count, JSONParserEngine.isDigit(input[position]) {
                throw JSONParseError(
                    code: .invalidNumber,
                    offset: position - 1,
                    message: "invalid number: leading zero at byte \(position - 1)"
                )
            }
        } else {
            skipDigits()
        }
        let integer = integerStart..<position
        var fraction = position..<position
        if position < input.count, input[position] == UInt8(ascii: ".") {
            position += 1
            try requireDigit(after: "the decimal point")
            let fractionStart = position
            skipDigits()
            fraction = fractionStart..<position
        }
        var exponent = 0
        if position < input.count, input[position] | 0x20 == UInt8(ascii: "e") {
            position += 1
            var exponentSign = 1
            if position < input.count, input[position] == UInt8(ascii: "+") || input[position] == UInt8(ascii: "-") {
                exponentSign = input[position] == UInt8(ascii: "-") ? -1 : 1
                position += 1
            }
            try requireDigit(after: "the exponent marker")
            let exponentStart = position
            skipDigits()
            // Longer exponents only matter to the slow path; Int.max keeps them out of the fast one.
            exponent = position - exponentStart <= 4 ? exponentSign * decimalValue(exponentStart..<position) : .max
        }

        let literal = String(decoding: input[start..<position], as: UTF8.self)
        let value: Double
        if let exact = fastPathValue(integer: integer, fraction: fraction, exponent: exponent) {
            value = negative ? -exact : exact
        } else if let parsed = Double(literal) {
            value = parsed
        } else {
            throw JSONParseError(code: .invalidNumber, offset: start, message: "invalid number at byte \(start)")
        }
        guard value.isFinite || numberRange == .unlimited else {
            throw JSONParseError(
                code: .numberNotFinite,
                offset: start,
                message: "number at byte \(start) is too large for a double (I-JSON requires finite numbers)"
            )
        }
        return JSONNumber(doubleValue: value, literal: literal)
    }

    /// The powers of ten a double holds exactly.
    private static let exactPowersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
        1e20, 1e21, 1e22,
    ]

    /// The magnitude of a number with these digits, when one IEEE operation computes it correctly rounded: at most
    /// 15 significant digits (an exact double) scaled by a power of ten up to 10^22 (also exact). Else `nil`, for
    /// the standard library's parser.
    private func fastPathValue(integer: Range<Int>, fraction: Range<Int>, exponent: Int) -> Double? {
        guard integer.count + fraction.count <= 15 else { return nil }
        let scale = exponent - fraction.count
        guard scale >= -22, scale <= 22 else { return nil }
        let digits = Double(decimalValue(fraction, after: decimalValue(integer)))
        let power = JSONParserEngine.exactPowersOfTen[abs(scale)]
        return scale < 0 ? digits / power : digits * power
    }

    /// The value of `prefix` followed by a run of decimal digits, together at most 18 digits.
    private func decimalValue(_ digits: Range<Int>, after prefix: Int = 0) -> Int {
        var value = prefix
        for index in digits {
            value = value * 10 + Int(input[index] &- UInt8(ascii: "0"))
        }
        return value
    }

    private func requireDigit(after what: String) throws(JSONParseError) {
        guard position < input.count else {
            throw JSONParseError(
                code: .unexpectedEnd,
                offset: position,
                message: "input ends at byte \(position) where a digit must follow \(what)"
            )
        }
        guard JSONParserEngine.isDigit(input[position]) else {
            throw JSONParseError(
                code: .invalidNumber,
                offset: position,
                message: "invalid number: expected a digit after \(what) at byte \(position), "
                    + "found \(describeByte(at: position))"
            )
        }
    }

    private mutating func skipDigits() {
        while position < input.count, JSONParserEngine.isDigit(input[position]) {
            position += 1
        }
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    // MARK: - Errors

    private func endError(expected: String) -> JSONParseError {
        JSONParseError(
            code: .unexpectedEnd,
            offset: position,
            message: "unexpected end of input at byte \(position), expected \(expected)"
        )
    }

    /// The error for an unexpected byte at `position`; an ill-formed UTF-8 sequence is reported as such.
    private func unexpectedError(expected: String) -> JSONParseError {
        if wellFormedSequenceLength(at: position) == nil {
            return JSONParseError(
                code: .invalidUTF8,
                offset: position,
                message: "invalid UTF-8 sequence starting with byte 0x\(JSONParserEngine.hex(input[position])) "
                    + "at byte \(position)"
            )
        }
        return JSONParseError(
            code: .unexpectedCharacter,
            offset: position,
            message: "unexpected \(describeByte(at: position)) at byte \(position), expected \(expected)"
        )
    }

    private func controlCharacterError() -> JSONParseError {
        JSONParseError(
            code: .controlCharacterInString,
            offset: position,
            message: "unescaped control character U+00\(JSONParserEngine.hex(input[position]).uppercased()) "
                + "in string at byte \(position)"
        )
    }

    private func unterminatedStringError(_ quoteOffset: Int) -> JSONParseError {
        JSONParseError(
            code: .unexpectedEnd,
            offset: input.count,
            message: "unterminated string: input ends at byte \(input.count) inside the string that starts "
                + "at byte \(quoteOffset)"
        )
    }

    private func loneSurrogateError(_ unit: UInt16, at offset: Int, detail: String) -> JSONParseError {
        let hexUnit = String(unit, radix: 16, uppercase: true)
        return JSONParseError(
            code: .loneSurrogate,
            offset: offset,
            message: "lone surrogate \\u\(hexUnit) at byte \(offset): \(detail)"
        )
    }

    /// A short description of the character at `offset` for messages: `'x'`, `U+00E9 'é'` or `byte 0xFF`.
    private func describeByte(at offset: Int) -> String {
        guard offset < input.count else { return "end of input" }
        let byte = input[offset]
        if byte >= 0x21, byte < 0x7F {
            return "character '\(String(UnicodeScalar(byte)))'"
        }
        if byte < 0x80 {
            return "character U+00\(JSONParserEngine.hex(byte).uppercased())"
        }
        guard let length = wellFormedSequenceLength(at: offset) else {
            return "byte 0x\(JSONParserEngine.hex(byte))"
        }
        let text = String(decoding: input[offset..<(offset + length)], as: UTF8.self)
        let scalarHex = text.unicodeScalars.first.map { String($0.value, radix: 16, uppercase: true) } ?? "?"
        return "character U+\(scalarHex) '\(text)'"
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = String(byte, radix: 16)
        return byte < 0x10 ? "0" + digits : digits
    }

    /// A key rendered for a message as a JSON string literal (quotes, backslashes and controls escaped).
    static func quoted(_ key: String) -> String {
        var bytes: [UInt8] = []
        CanonicalJSON.appendString(key, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func scalarList(_ text: String) -> String {
        text.unicodeScalars.map { "U+" + String($0.value, radix: 16, uppercase: true) }.joined(separator: " ")
    }
}

extension JSONParserEngine {
    /// The number spelled by all of `literal` (any magnitude), or `nil` when it is not exactly one RFC 8259 number.
    static func number(spelledBy literal: String) -> JSONNumber? {
        let bytes = Array(literal.utf8)
        guard let first = bytes.first, first == UInt8(ascii: "-") || isDigit(first) else { return nil }
        var engine = JSONParserEngine(input: bytes[...], maxDepth: 0, numberRange: .unlimited)
        guard let number = try? engine.parseNumber(), engine.position == bytes.count else { return nil }
        return number
    }

    /// A byte slice viewed through zero-based offsets, so that error offsets count from the input's first byte
    /// whatever the slice's own indices are. Every access is bounds-checked by `ArraySlice`.
    struct Input {
        private let bytes: ArraySlice<UInt8>
        private let base: Int
        let count: Int

        init(_ bytes: ArraySlice<UInt8>) {
            self.bytes = bytes
            self.base = bytes.startIndex
            self.count = bytes.count
        }

        @inline(__always)
        subscript(offset: Int) -> UInt8 {
            bytes[base &+ offset]
        }

        @inline(__always)
        subscript(range: Range<Int>) -> ArraySlice<UInt8> {
            bytes[(base &+ range.lowerBound)..<(base &+ range.upperBound)]
        }

        // The two hot scanning loops read through a `Span` (safe, bounds-checked, indexed from 0 like the
        // offsets here), which the optimizer handles better than repeated `ArraySlice` subscripting.

        /// The offset of the first byte at or after `start` that is not JSON whitespace, or `count`.
        func endOfWhitespace(from start: Int) -> Int {
            let span = bytes.span
            var offset = start
            while offset < span.count {
                switch span[offset] {
                case 0x20, 0x09, 0x0A, 0x0D:
                    offset += 1
                default:
                    return offset
                }
            }
            return offset
        }

        /// The offset of the first byte at or after `start` that is not plain string content (a quote, a
        /// backslash, a control below U+0020 or a non-ASCII byte), or `count`.
        func endOfPlainStringRun(from start: Int) -> Int {
            let span = bytes.span
            var offset = start
            while offset < span.count {
                let byte = span[offset]
                if byte < 0x20 || byte >= 0x80 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                    return offset
                }
                offset += 1
            }
            return offset
        }
    }
}
