import CanonicalJSON
import Foundation
import Testing

@Suite("Parser acceptance")
struct ParserAcceptanceTests {
    let parser = JSONParser()

    @Test(
        "top-level values of every kind",
        arguments: [
            ("null", JSONValue.null), ("true", true), ("false", false), ("0", 0), ("-1.25e2", -125.0),
            (#""x""#, "x"), ("[]", []), ("{}", [:]), (" \t\r\n[ 1 , { \"a\" : null } ]\n", [1, ["a": nil]]),
        ] as [(String, JSONValue)]
    )
    func topLevel(_ text: String, _ expected: JSONValue) throws {
        #expect(try parser.parse(text) == expected)
    }

    @Test("escapes decode to the right scalars")
    func escapes() throws {
        let value = try parser.parse(#""\"\\\/\b\f\n\r\t\u0000\u001F\u00e9\u20AC\ud83d\ude02\uDBFF\uDFFF""#)
        let scalars = try #require(value.stringValue).unicodeScalars.map(\.value)
        let expected: [UInt32] = [
            0x22, 0x5C, 0x2F, 0x08, 0x0C, 0x0A, 0x0D, 0x09, 0x00, 0x1F, 0xE9, 0x20AC, 0x1F602, 0x10FFFF,
        ]
        #expect(scalars == expected)
    }

    @Test("raw UTF-8 of every length is accepted unchanged")
    func rawUTF8() throws {
        let text = "a\u{7F}\u{80}é\u{7FF}\u{800}€\u{FFFF}😂\u{10FFFF}"
        let value = try parser.parse(Array(("\"" + text + "\"").utf8))
        #expect(value.stringValue.map { Array($0.utf8) } == Array(text.utf8))
    }

    @Test("-0 parses as negative zero and serializes as 0")
    func negativeZero() throws {
        let value = try parser.parse("-0")
        let number = try #require(value.doubleValue)
        #expect(number == 0 && number.sign == .minus)
        #expect(value.canonicalString == "0")
        #expect(try parser.parse("-0.0e5").doubleValue?.sign == .minus)
    }

    @Test(
        "numbers are correctly rounded",
        arguments: [
            ("0.1", 0.1), ("1e-400", 0.0), ("2.2250738585072011e-308", Double(bitPattern: 0x000F_FFFF_FFFF_FFFF)),
            ("9007199254740993", 9007199254740992.0), ("123456789012345678901234567890", 1.2345678901234568e+29),
            ("1E+2", 100.0), ("1e-07", 1e-7), ("1.7976931348623157e308", 1.7976931348623157e308),
            ("4.9406564584124654e-324", .leastNonzeroMagnitude), ("999999999999999", 999999999999999.0),
            ("-999999999999999", -999999999999999.0), ("0.30000000000000004", 0.30000000000000004),
        ] as [(String, Double)]
    )
    func numbers(_ text: String, _ expected: Double) throws {
        #expect(try parser.parse(text).doubleValue?.bitPattern == expected.bitPattern)
    }

    @Test("contiguous and non-contiguous inputs parse alike, offsets relative to the first byte")
    func inputKinds() throws {
        let bytes = Array(#"  {"k":[1,"two",null]}"#.utf8)
        let expected: JSONValue = ["k": [1, "two", nil]]
        #expect(try parser.parse(bytes) == expected)
        #expect(try parser.parse(Data(bytes)) == expected)
        #expect(try parser.parse(bytes[2...]) == expected)
        #expect(try parser.parse(bytes.lazy.map { $0 }) == expected)
        #expect(try parser.parse(Array(bytes.reversed()).reversed()) == expected)

        let bad = Array("[1,,2]".utf8)
        let padded = [0x20, 0x20] + bad
        let sliceError = #expect(throws: JSONParseError.self) { try parser.parse(padded[2...]) }
        #expect(sliceError?.offset == 3)
        let dataError = #expect(throws: JSONParseError.self) { try parser.parse(Data(bad)) }
        #expect(dataError?.offset == 3)
        let lazyError = #expect(throws: JSONParseError.self) { try parser.parse(bad.lazy.map { $0 }) }
        #expect(lazyError?.offset == 3)
    }

    @Test("large inputs parse in linear time")
    func largeInputs() throws {
        let count = 40_000
        var array = "["
        var object = "{"
        for index in 0..<count {
            array += index == 0 ? "\"s\(index)\"" : ",\(index).5"
            object += (index == 0 ? "" : ",") + "\"key\(index)\":\(index)"
        }
        array += "]"
        object += "}"
        let parsedArray = try parser.parse(array)
        #expect(parsedArray.arrayValue?.count == count)
        let parsedObject = try parser.parse(object)
        #expect(parsedObject.objectValue?.count == count)
        #expect(parsedObject["key39999"] == 39999)

        let longString = "\"" + String(repeating: "ab\\n\\u00e9", count: 50_000) + "\""
        #expect(try parser.parse(longString).stringValue?.utf8.count == 50_000 * 5)
        let longNumber = "1" + String(repeating: "0", count: 300) + "e-300"
        #expect(try parser.parse(longNumber) == 1)
    }
}
