import CanonicalJSON
import TestSupport
import Testing

@Suite("ECMAScript number serialization")
struct NumberFormattingTests {
    /// The lines of es6testfile1000.txt as (IEEE 754 bits, expected string).
    static func loadLines() throws -> [(bits: UInt64, expected: String)] {
        let text = try Fixtures.text("es6testfile1000.txt")
        return text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }).compactMap { line in
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            guard fields.count == 2, let bits = UInt64(fields[0], radix: 16) else { return nil }
            return (bits, String(fields[1]))
        }
    }

    @Test("all 1,000 es6testfile lines format exactly")
    func es6TestFileFormats() throws {
        let lines = try Self.loadLines()
        #expect(lines.count == 1000)
        var failures = 0
        for (number, line) in lines.enumerated() {
            let value = Double(bitPattern: line.bits)
            let formatted = CanonicalJSON.formatNumber(value)
            if formatted != line.expected {
                failures += 1
                let bits = String(line.bits, radix: 16)
                Issue.record("line \(number + 1): \(bits) -> \(formatted), expected \(line.expected)")
            }
        }
        #expect(failures == 0)
    }

    @Test("all 1,000 es6testfile strings parse back to the same bits")
    func es6TestFileParsesBack() throws {
        let parser = JSONParser()
        for (number, line) in try Self.loadLines().enumerated() {
            let parsed = try parser.parse(Array(line.expected.utf8))
            let double = try #require(parsed.doubleValue, "line \(number + 1)")
            if line.bits == 0x8000_0000_0000_0000 {
                // -0 is written as "0", which reads back as +0.
                #expect(double.bitPattern == 0, "line \(number + 1)")
            } else {
                #expect(double.bitPattern == line.bits, "line \(number + 1): \(line.expected)")
            }
            // Serializing the parsed value inside a document gives the same text again.
            #expect(parsed.canonicalString == line.expected, "line \(number + 1)")
        }
    }

    @Test(
        "Number::toString layout rules",
        arguments: [
            (0.0, "0"), (-0.0, "0"), (1.0, "1"), (-1.5, "-1.5"), (4.50, "4.5"), (0.002, "0.002"),
            (1e30, "1e+30"), (1e21, "1e+21"), (1e20, "100000000000000000000"), (1e-7, "1e-7"),
            (0.000001, "0.000001"), (1.5e-6, "0.0000015"), (123e-20, "1.23e-18"), (.leastNonzeroMagnitude, "5e-324"),
            (Double.greatestFiniteMagnitude, "1.7976931348623157e+308"), (333333333.33333329, "333333333.3333333"),
            (3.3333333333333335e+21, "3.3333333333333335e+21"), (333333333333333300000.0, "333333333333333300000"),
            (9007199254740992.0, "9007199254740992"), (0.1, "0.1"), (100.0, "100"), (1e16, "10000000000000000"),
            (-1e-27, "-1e-27"), (2.5e+25, "2.5e+25"),
        ] as [(Double, String)]
    )
    func layout(_ value: Double, _ expected: String) {
        #expect(CanonicalJSON.formatNumber(value) == expected)
        #expect(JSONValue.number(value).canonicalString == expected)
    }

    @Test("non-finite values follow ECMAScript in formatNumber and become null in documents")
    func nonFinite() {
        #expect(CanonicalJSON.formatNumber(.nan) == "NaN")
        #expect(CanonicalJSON.formatNumber(.infinity) == "Infinity")
        #expect(CanonicalJSON.formatNumber(-.infinity) == "-Infinity")
        #expect(JSONValue.array([.number(.infinity), .number(.nan)]).canonicalString == "[null,null]")
    }
}
