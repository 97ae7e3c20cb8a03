import CanonicalJSON
import Testing

/// Parses and returns the error, or `nil` when the input was accepted.
func parseError(_ bytes: [UInt8], limits: JSONParser.Limits = .init()) -> JSONParseError? {
    do {
        _ = try JSONParser(limits: limits).parse(bytes)
        return nil
    } catch {
        return error
    }
}

/// An input the parser must reject, with the expected code and byte offset.
struct RejectionCase: Sendable, CustomTestStringConvertible {
    var name: String
    var bytes: [UInt8]
    var code: JSONParseError.Code
    var offset: Int

    init(_ name: String, _ text: String, _ code: JSONParseError.Code, at offset: Int) {
        self.init(name, Array(text.utf8), code, at: offset)
    }

    init(_ name: String, _ bytes: [UInt8], _ code: JSONParseError.Code, at offset: Int) {
        self.name = name
        self.bytes = bytes
        self.code = code
        self.offset = offset
    }

    var testDescription: String { name }

    static let all: [RejectionCase] = [
        // Duplicates, compared after decoding.
        .init("duplicate key", #"{"a":1,"a":2}"#, .duplicateKey, at: 7),
        .init("duplicate key via escape", #"{"a":1,"\u0061":2}"#, .duplicateKey, at: 7),
        .init("nested duplicate key", #"[{"x":{"k":1,"j":2,"k":3}}]"#, .duplicateKey, at: 19),
        .init("canonically equivalent keys", #"{"\u00c5":1,"A\u030a":2}"#, .duplicateKey, at: 12),
        // Surrogates.
        .init("lone high surrogate", #"["\ud83d"]"#, .loneSurrogate, at: 2),
        .init("high surrogate followed by text", #""\uD83Dx""#, .loneSurrogate, at: 1),
        .init("high surrogate followed by non-surrogate", #""\ud83d\u0041""#, .loneSurrogate, at: 1),
        .init("two high surrogates", #""\ud83d\ud83d""#, .loneSurrogate, at: 1),
        .init("lone low surrogate", #"["\ude02"]"#, .loneSurrogate, at: 2),
        .init("reversed surrogate pair", #""\ude02\ud83d""#, .loneSurrogate, at: 1),
        // Numbers.
        .init("1e400", "1e400", .numberNotFinite, at: 0),
        .init("-1e400 in array", "[1, -1e400]", .numberNotFinite, at: 4),
        .init("huge mantissa", "[" + String(repeating: "9", count: 400) + "]", .numberNotFinite, at: 1),
        .init("leading zero", "01", .invalidNumber, at: 0),
        .init("negative leading zero", "[-012]", .invalidNumber, at: 2),
        .init("plus sign", "+1", .unexpectedCharacter, at: 0),
        .init("leading dot", "[.5]", .unexpectedCharacter, at: 1),
        .init("trailing dot", "[5.]", .invalidNumber, at: 3),
        .init("trailing dot at end", "5.", .unexpectedEnd, at: 2),
        .init("empty exponent", "[1e]", .invalidNumber, at: 3),
        .init("exponent sign only", "[1e+]", .invalidNumber, at: 4),
        .init("minus only", "[-]", .invalidNumber, at: 2),
        .init("hex number", "0x10", .trailingData, at: 1),
        .init("NaN", "NaN", .unexpectedCharacter, at: 0),
        .init("Infinity", "[Infinity]", .unexpectedCharacter, at: 1),
        // Structure.
        .init("trailing comma in array", "[1,2,]", .unexpectedCharacter, at: 5),
        .init("trailing comma in object", #"{"a":1,}"#, .unexpectedCharacter, at: 7),
        .init("missing colon", #"{"a" 1}"#, .unexpectedCharacter, at: 5),
        .init("unquoted key", "{a:1}", .unexpectedCharacter, at: 1),
        .init("single quotes", "['a']", .unexpectedCharacter, at: 1),
        .init("trailing data", "{} x", .trailingData, at: 3),
        .init("two values", "1 2", .trailingData, at: 2),
        .init("empty input", "", .unexpectedEnd, at: 0),
        .init("whitespace only", " \n", .unexpectedEnd, at: 2),
        .init("unclosed array", "[1,2", .unexpectedEnd, at: 4),
        .init("unclosed object", #"{"a":1"#, .unexpectedEnd, at: 6),
        .init("truncated literal", "tru", .unexpectedEnd, at: 3),
        .init("misspelled literal", "[nul1]", .unexpectedCharacter, at: 4),
        .init("capitalized literal", "True", .unexpectedCharacter, at: 0),
        .init("form feed is not whitespace", "\u{0C}1", .unexpectedCharacter, at: 0),
        .init("no-break space is not whitespace", "[\u{A0}1]", .unexpectedCharacter, at: 1),
        // Strings.
        .init("raw tab in string", "\"a\tb\"", .controlCharacterInString, at: 2),
        .init("raw newline in string", "[\"\n\"]", .controlCharacterInString, at: 2),
        .init("raw NUL in string", [0x22, 0x00, 0x22], .controlCharacterInString, at: 1),
        .init("unterminated string", #"["abc"#, .unexpectedEnd, at: 5),
        .init("invalid escape", #""\x""#, .invalidEscape, at: 1),
        .init("escaped single quote", #""\'""#, .invalidEscape, at: 1),
        .init("short unicode escape", #""\u12G4""#, .invalidEscape, at: 1),
        .init("truncated unicode escape", #""\u12"#, .unexpectedEnd, at: 5),
        // UTF-8.
        .init("overlong slash", [0x22, 0xC0, 0xAF, 0x22], .invalidUTF8, at: 1),
        .init("overlong three-byte", [0x22, 0xE0, 0x80, 0xAF, 0x22], .invalidUTF8, at: 1),
        .init("UTF-8 encoded surrogate", [0x22, 0x61, 0xED, 0xA0, 0x80, 0x22], .invalidUTF8, at: 2),
        .init("above U+10FFFF", [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], .invalidUTF8, at: 1),
        .init("F5 lead byte", [0x22, 0xF5, 0x80, 0x80, 0x80, 0x22], .invalidUTF8, at: 1),
        .init("truncated sequence", [0x22, 0xE2, 0x82, 0x22], .invalidUTF8, at: 1),
        .init("lone continuation byte", [0x22, 0x80, 0x22], .invalidUTF8, at: 1),
        .init("invalid byte outside string", [0x5B, 0xFF, 0x5D], .invalidUTF8, at: 1),
        .init("invalid byte after value", [0x31, 0x20, 0xFE], .trailingData, at: 2),
        .init("byte order mark", [0xEF, 0xBB, 0xBF, 0x7B, 0x7D], .unexpectedCharacter, at: 0),
        // Depth.
        .init(
            "too deep arrays",
            String(repeating: "[", count: 65) + String(repeating: "]", count: 65),
            .tooDeep,
            at: 64
        ),
        .init(
            "too deep objects",
            String(repeating: #"{"k":"#, count: 65) + "1" + String(repeating: "}", count: 65),
            .tooDeep,
            at: 64 * 5
        ),
    ]
}

@Suite("Parser rejections")
struct ParserRejectionTests {
    @Test("rejects with the expected code and offset", arguments: RejectionCase.all)
    func rejects(_ testCase: RejectionCase) throws {
        let error = try #require(parseError(testCase.bytes))
        #expect(error.code == testCase.code)
        #expect(error.offset == testCase.offset)
        #expect(error.message.contains("at byte \(testCase.offset)"), "\(error.message)")
        #expect(error.description == error.message)
        // The convenience entry point reports the same error.
        #expect(throws: error) { try CanonicalJSON.canonicalize(testCase.bytes) }
    }

    @Test("every input kind reports the same error, offsets relative to the first byte", arguments: RejectionCase.all)
    func rejectsAlikeForEveryInputKind(_ testCase: RejectionCase) throws {
        let error = try #require(parseError(testCase.bytes))
        let parser = JSONParser()
        // A slice whose indices start past 0 and that has bytes after its end (its end is not the array's end).
        let padded = Array("[1,".utf8) + testCase.bytes + Array("]]".utf8)
        let slice = padded[3..<(3 + testCase.bytes.count)]
        #expect(slice.startIndex == 3)
        #expect(throws: error) { try parser.parse(slice) }
        #expect(throws: error) { try parser.parse(ArraySlice(testCase.bytes)) }
        #expect(throws: error) { try parser.parse(ContiguousArray(testCase.bytes)) }
        #expect(throws: error) { try parser.parse(testCase.bytes.lazy.map { $0 }) }
        if let text = String(validating: testCase.bytes, as: UTF8.self) {
            #expect(throws: error) { try parser.parse(text) }
            #expect(throws: error) { try parser.parse(Substring(text).utf8) }
        }
    }

    @Test("duplicate key messages name the key and the position")
    func duplicateMessage() throws {
        let error = try #require(parseError(Array(#"{"a":1,"b":{},"a":2}"#.utf8)))
        #expect(error.code == .duplicateKey)
        #expect(error.message == #"duplicate key "a" at byte 14"#)

        let quoted = try #require(parseError(Array(#"{"x\"y":1,"x\u0022y":2}"#.utf8)))
        #expect(quoted.message == #"duplicate key "x\"y" at byte 10"#)

        let equivalent = try #require(parseError(Array(#"{"\u00c5":1,"A\u030a":2}"#.utf8)))
        #expect(equivalent.message.contains("canonically equivalent"))
        #expect(equivalent.message.contains("U+41 U+30A"))
        #expect(equivalent.message.contains("U+C5"))
    }

    @Test("nesting exactly at the depth limit is accepted")
    func depthLimitBoundary() throws {
        let atLimit = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(parseError(Array(atLimit.utf8)) == nil)
        let limits = JSONParser.Limits(maxDepth: 2)
        #expect(parseError(Array("[[1]]".utf8), limits: limits) == nil)
        #expect(parseError(Array(#"[{"a":[]}]"#.utf8), limits: limits)?.code == .tooDeep)
        #expect(parseError(Array("7".utf8), limits: JSONParser.Limits(maxDepth: 0)) == nil)
        #expect(parseError(Array("[]".utf8), limits: JSONParser.Limits(maxDepth: 0))?.code == .tooDeep)
    }

    @Test("deep nesting far beyond the limit fails fast without recursion")
    func veryDeepInput() throws {
        let bytes = [UInt8](repeating: UInt8(ascii: "["), count: 1 << 20)
        let error = try #require(parseError(bytes))
        #expect(error.code == .tooDeep)
        #expect(error.offset == 64)
        // A generous limit is still handled iteratively.
        let limits = JSONParser.Limits(maxDepth: 5_000, maxBytes: 1 << 20)
        let deep =
            [UInt8](repeating: UInt8(ascii: "["), count: 2_000)
            + [UInt8](repeating: UInt8(ascii: "]"), count: 2_000)
        #expect(parseError(deep, limits: limits) == nil)
    }

    @Test("input above maxBytes is rejected as tooLarge")
    func tooLarge() throws {
        let limits = JSONParser.Limits(maxDepth: 64, maxBytes: 10)
        let error = try #require(parseError(Array(#"["abcdefgh"]"#.utf8), limits: limits))
        #expect(error.code == .tooLarge)
        #expect(error.offset == 10)
        #expect(error.message.contains("at byte 10"))
        #expect(parseError(Array(#"["abcdef"]"#.utf8), limits: limits) == nil)
        #expect(JSONParser.Limits().maxBytes == 1 << 20)
        #expect(JSONParser.Limits().maxDepth == 64)
    }
}
