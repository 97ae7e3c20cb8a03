/// Why a text is not a JSON document the protocol accepts. Internal: the envelope codec turns it into an
/// ``EnvelopeDecodingError`` with a message for people.
struct JSONParseError: Error, Hashable {
    enum Reason: Hashable {
        case unexpectedEnd
        case unexpectedByte
        case invalidNumber
        case invalidEscape
        case controlCharacterInString
        case loneSurrogate
        case duplicateKey(String)
        case tooDeeplyNested
        case trailingCharacters
    }

    var reason: Reason
    /// Byte offset into the UTF-8 text.
    var offset: Int

    var summary: String {
        switch reason {
        case .unexpectedEnd: "the text ends in the middle of a value"
        case .unexpectedByte: "unexpected character at byte \(offset)"
        case .invalidNumber: "malformed number at byte \(offset)"
        case .invalidEscape: "malformed escape sequence at byte \(offset)"
        case .controlCharacterInString: "unescaped control character in a string at byte \(offset)"
        case .loneSurrogate: "\\u escape of a lone UTF-16 surrogate at byte \(offset)"
        case .duplicateKey: "an object repeats a key (at byte \(offset))"
        case .tooDeeplyNested: "values are nested more than \(JSONParser.maximumDepth) levels deep"
        case .trailingCharacters: "extra characters after the JSON value at byte \(offset)"
        }
    }
}

/// A strict RFC 8259 parser over the UTF-8 bytes of a text frame.
///
/// Strict means: no comments, no trailing commas, no leading zeros, no lone surrogates, no duplicate object
/// keys (two different values for one key would let the server and a client read different messages), and a
/// nesting limit so a 64 KiB frame of `[[[[…` cannot exhaust the stack.
struct JSONParser {
    static let maximumDepth = 64

    private let bytes: [UInt8]
    private var position = 0

    private init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Parses one complete JSON document (surrounding whitespace allowed).
    static func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        var parser = JSONParser(bytes: Array(text.utf8))
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.position == parser.bytes.count else {
            throw JSONParseError(reason: .trailingCharacters, offset: parser.position)
        }
        return value
    }

    private func error(_ reason: JSONParseError.Reason) -> JSONParseError {
        JSONParseError(reason: reason, offset: position)
    }

    private var current: UInt8? { position < bytes.count ? bytes[position] : nil }

    private mutating func skipWhitespace() {
        while let byte = current,
            byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
                || byte == UInt8(ascii: "\t")
        {
            position += 1
        }
    }

    private mutating func expect(_ byte: UInt8) throws(JSONParseError) {
        guard let actual = current else { throw error(.unexpectedEnd) }
        guard actual == byte else { throw error(.unexpectedByte) }
        position += 1
    }

    private mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
        guard let byte = current else { throw error(.unexpectedEnd) }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try parseKeyword("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try parseKeyword("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try parseKeyword("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return .number(try parseNumber())
        default:
            throw error(.unexpectedByte)
        }
    }

    private mutating func parseKeyword(_ keyword: String) throws(JSONParseError) {
        for byte in keyword.utf8 {
            try expect(byte)
        }
    }

    private mutating func parseObject(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= Self.maximumDepth else { throw error(.tooDeeplyNested) }
        position += 1  // {
        skipWhitespace()
        var members: [String: JSONValue] = [:]
        if current == UInt8(ascii: "}") {
            position += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard let byte = current else { throw error(.unexpectedEnd) }
            guard byte == UInt8(ascii: "\"") else { throw error(.unexpectedByte) }
            let keyOffset = position
            let key = try parseString()
            skipWhitespace()
            try expect(UInt8(ascii: ":"))
            skipWhitespace()
            let value = try parseValue(depth: depth)
            guard members.updateValue(value, forKey: key) == nil else {
                throw JSONParseError(reason: .duplicateKey(key), offset: keyOffset)
            }
            skipWhitespace()
            guard let separator = current else { throw error(.unexpectedEnd) }
            position += 1
            switch separator {
            case UInt8(ascii: ","): continue
            case UInt8(ascii: "}"): return .object(members)
            default:
                position -= 1
                throw error(.unexpectedByte)
            }
        }
    }

    private mutating func parseArray(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= Self.maximumDepth else { throw error(.tooDeeplyNested) }
        position += 1  // [
        skipWhitespace()
        var elements: [JSONValue] = []
        if current == UInt8(ascii: "]") {
            position += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth))
            skipWhitespace()
            guard let separator = current else { throw error(.unexpectedEnd) }
            position += 1
            switch separator {
            case UInt8(ascii: ","): continue
            case UInt8(ascii: "]"): return .array(elements)
            default:
                position -= 1
                throw error(.unexpectedByte)
            }
        }
    }

    private mutating func parseNumber() throws(JSONParseError) -> JSONNumber {
        let start = position
        // Take the longest run of bytes that can appear in a number, then check the grammar on it.
        while let byte = current,
            byte.isASCIIDigit || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+")
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E")
        {
            position += 1
        }
        guard JSONNumber.isValidLiteral(bytes[start..<position]) else {
            throw JSONParseError(reason: .invalidNumber, offset: start)
        }
        return JSONNumber(validatedLiteral: String(decoding: bytes[start..<position], as: UTF8.self))
    }

    /// Parses a string starting at its opening quote. The input came from a Swift `String`, so it is valid
    /// UTF-8 and every run between ASCII delimiters decodes exactly.
    private mutating func parseString() throws(JSONParseError) -> String {
        position += 1  // "
        var decoded: [UInt8] = []
        var runStart = position
        while let byte = current {
            switch byte {
            case UInt8(ascii: "\""):
                decoded.append(contentsOf: bytes[runStart..<position])
                position += 1
                return String(decoding: decoded, as: UTF8.self)
            case UInt8(ascii: "\\"):
                decoded.append(contentsOf: bytes[runStart..<position])
                position += 1
                try parseEscape(into: &decoded)
                runStart = position
            case 0..<0x20:
                throw error(.controlCharacterInString)
            default:
                position += 1
            }
        }
        throw error(.unexpectedEnd)
    }

    private mutating func parseEscape(into decoded: inout [UInt8]) throws(JSONParseError) {
        guard let byte = current else { throw error(.unexpectedEnd) }
        position += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(byte)
        case UInt8(ascii: "b"): decoded.append(0x08)
        case UInt8(ascii: "f"): decoded.append(0x0C)
        case UInt8(ascii: "n"): decoded.append(0x0A)
        case UInt8(ascii: "r"): decoded.append(0x0D)
        case UInt8(ascii: "t"): decoded.append(0x09)
        case UInt8(ascii: "u"):
            let escapeStart = position - 2
            let unit = try parseHex4()
            let scalar: Unicode.Scalar?
            switch unit {
            case 0xD800...0xDBFF:
                guard current == UInt8(ascii: "\\"), position + 1 < bytes.count,
                    bytes[position + 1] == UInt8(ascii: "u")
                else { throw JSONParseError(reason: .loneSurrogate, offset: escapeStart) }
                position += 2
                let low = try parseHex4()
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw JSONParseError(reason: .loneSurrogate, offset: escapeStart)
                }
                scalar = Unicode.Scalar(0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00))
            case 0xDC00...0xDFFF:
                throw JSONParseError(reason: .loneSurrogate, offset: escapeStart)
            default:
                scalar = Unicode.Scalar(unit)
            }
            guard let scalar else { throw JSONParseError(reason: .loneSurrogate, offset: escapeStart) }
            UTF8.encode(scalar) { decoded.append($0) }
        default:
            position -= 1
            throw error(.invalidEscape)
        }
    }

    private mutating func parseHex4() throws(JSONParseError) -> UInt16 {
        var value: UInt16 = 0
        for _ in 0..<4 {
            guard let byte = current else { throw error(.unexpectedEnd) }
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error(.invalidEscape)
            }
            value = value << 4 | UInt16(digit)
            position += 1
        }
        return value
    }
}
