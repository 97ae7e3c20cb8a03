import CanonicalJSON
import TestSupport
import Testing

@Suite("JSONNumber: the double for canonical form and equality, the literal for forwarding")
struct JSONNumberTests {
    let parser = JSONParser()

    @Test("JSON numbers keep valid literals only")
    func numberLiterals() {
        for valid in ["0", "-0", "12", "-1.5", "1e5", "1E+5", "2.5e-3", "12345678901234567890", "1e400"] {
            #expect(JSONNumber(literal: valid)?.literal == valid, "\(valid)")
        }
        for invalid in ["", "-", "01", "1.", ".5", "+1", "1e", "1e+", "NaN", "Infinity", "0x10", "1 ", " 1", "1,"] {
            #expect(JSONNumber(literal: invalid) == nil, "\(invalid)")
        }
        #expect(JSONNumber(42).intValue == 42)
        #expect(JSONNumber(literal: "2.5")?.doubleValue == 2.5)
        #expect(JSONNumber(literal: "1e400")?.doubleValue == .infinity)
    }

    @Test("intValue only for integer literals within Int's range")
    func intValue() {
        #expect(JSONNumber(literal: "-0")?.intValue == 0)
        #expect(JSONNumber(literal: "-17")?.intValue == -17)
        #expect(JSONNumber(literal: "4.2e1")?.intValue == nil)
        #expect(JSONNumber(literal: "1.0")?.intValue == nil)
        #expect(JSONNumber(literal: "9223372036854775808")?.intValue == nil)
        #expect(JSONNumber(Int.min).intValue == Int.min)
        #expect(JSONNumber(3.0).intValue == 3)
        #expect(JSONNumber(2.5).intValue == nil)
        #expect(JSONNumber(1e19).intValue == nil)
    }

    @Test("a number made from a value is written in its canonical form")
    func madeFromValues() {
        #expect(JSONNumber(0.1).literal == "0.1")
        #expect(JSONNumber(100.0).literal == "100")
        #expect(JSONNumber(1e21).literal == "1e+21")
        #expect(JSONNumber(-0.0).literal == "0")
        #expect(JSONNumber(Int.max).literal == "9223372036854775807")
        #expect(JSONNumber(Int.max).doubleValue == 9_223_372_036_854_775_807.0)
        #expect(JSONNumber(Double.nan).literal == "null")
        #expect(JSONNumber(7).description == "7")
        let value: JSONValue = [.number(.infinity), .number(-.infinity), 12_345_678_901_234_567, 0.5]
        #expect(value.serialized == "[null,null,12345678901234567,0.5]")
        #expect(value.canonicalString == "[null,null,12345678901234568,0.5]")
    }

    @Test("parsed numbers keep their literal: the literal form reproduces them, the canonical form formats them")
    func literalsSurviveParsing() throws {
        let text = #"{"a":1.50,"b":-0,"c":1E+2,"d":12345678901234567890123,"e":[0.0,2.5e-3,-7]}"#
        let value = try parser.parse(text)
        #expect(value["a"]?.numberValue?.literal == "1.50")
        #expect(value["d"]?.numberValue?.literal == "12345678901234567890123")
        #expect(value.serialized == text)
        #expect(value.canonicalString == #"{"a":1.5,"b":0,"c":100,"d":1.2345678901234568e+22,"e":[0,0.0025,-7]}"#)
        var bytes = Array("prefix ".utf8)
        value.serialize(into: &bytes)
        #expect(bytes == Array(("prefix " + text).utf8))
    }

    @Test("equality and hashing are numeric; literals tell spellings apart")
    func numericEquality() throws {
        let one = try parser.parse("1")
        let spelledOut = try parser.parse("1.0e0")
        #expect(one == spelledOut)
        #expect(one.hashValue == spelledOut.hashValue)
        #expect(one.numberValue?.literal != spelledOut.numberValue?.literal)
        #expect(one.serialized != spelledOut.serialized)
        #expect(one.canonicalBytes() == spelledOut.canonicalBytes())
        #expect(try parser.parse("-0") == .number(0))
        #expect(try parser.parse("9007199254740993") == .number(9_007_199_254_740_992))
        #expect(JSONNumber(.nan) == JSONNumber(.nan))
        #expect(JSONNumber(1) != JSONNumber(literal: "1.5"))
        let exponent = try parser.parse("1e0")
        let set: Set<JSONValue> = [1, 1.0, exponent, 2]
        #expect(set.count == 2)
    }

    @Test("short decimals (the parser's exact fast path) read as the standard library reads them", arguments: [3, 4])
    func shortDecimals(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        for _ in 0..<20_000 {
            let digits = String(rng.next() % 100_000_000_000_000_000).prefix(Int(1 + rng.next() % 18))
            let point = Int(rng.next() % UInt64(digits.count + 1))
            var text = rng.next() % 2 == 0 ? "" : "-"
            text += point == 0 ? "0" : String(digits.prefix(point))
            if point < digits.count {
                text += "." + digits.dropFirst(point)
            }
            if rng.next() % 2 == 0 {
                text += (rng.next() % 2 == 0 ? "e" : "E-") + String(rng.next() % 40)
            }
            let expected = try #require(Double(text), "\(text)")
            #expect(try parser.parse(text).doubleValue?.bitPattern == expected.bitPattern, "\(text)")
        }
    }

    @Test("numberRange .unlimited accepts numbers beyond the double range, keeping their literal")
    func unlimitedRange() throws {
        let unlimited = JSONParser(numberRange: .unlimited)
        let text = #"[1e400,-1e400,1e-400,"# + String(repeating: "9", count: 400) + "]"
        let value = try unlimited.parse(text)
        #expect(value.serialized == text)
        #expect(value.canonicalString == "[null,null,0,null]")
        #expect(value[0]?.doubleValue == .infinity)
        #expect(value[1]?.doubleValue == -.infinity)
        #expect(parseError(Array(text.utf8))?.code == .numberNotFinite)
        #expect(JSONParser().numberRange == .finiteDoubles)
    }

    @Test("numberRange .unlimited rejects everything else alike", arguments: RejectionCase.all)
    func unlimitedRejectsAlike(_ testCase: RejectionCase) throws {
        let unlimited = JSONParser(numberRange: .unlimited)
        if testCase.code == .numberNotFinite {
            #expect(throws: Never.self) { try unlimited.parse(testCase.bytes) }
        } else {
            let error = try #require(parseError(testCase.bytes))
            #expect(throws: error) { try unlimited.parse(testCase.bytes) }
        }
    }

    @Test("the literal form sorts members by UTF-8 bytes, the canonical form by UTF-16 code units")
    func memberOrder() {
        let value: JSONValue = ["\u{E000}": 1, "😂": 2, "a": 3, "B": 4, "\u{C5}": 5, "A\u{30A}x": 6]
        #expect(value.serialized == "{\"A\u{30A}x\":6,\"B\":4,\"a\":3,\"\u{C5}\":5,\"\u{E000}\":1,\"😂\":2}")
        #expect(value.canonicalString == "{\"A\u{30A}x\":6,\"B\":4,\"a\":3,\"\u{C5}\":5,\"😂\":2,\"\u{E000}\":1}")
    }

    @Test("both forms escape strings alike: only quote, backslash and controls")
    func stringEscaping() {
        let value: JSONValue = ["k\u{1}": .string("a\"b\\c\n\u{01}é😀\u{7F}/")]
        #expect(value.serialized == value.canonicalString)
        #expect(value.serialized == "{\"k\\u0001\":\"a\\\"b\\\\c\\n\\u0001é😀\u{7F}/\"}")
    }
}
