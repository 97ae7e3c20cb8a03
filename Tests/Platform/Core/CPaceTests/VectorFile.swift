import Foundation
import TestSupport

/// A failure to find or parse a value in the vector fixture.
struct VectorFileError: Error, CustomStringConvertible {
    let description: String
}

/// Reads values out of `Tests/Fixtures/cpace-x25519-vectors.txt` (the draft's Appendix A.1-A.3 and B.1, verbatim)
/// so the tests compare against the published text rather than against constants retyped in Swift.
struct VectorFile: Sendable {
    let lines: [String]

    /// The fixture, loaded once.
    static let shared: Result<VectorFile, any Error> = Result {
        let text = try Fixtures.text("cpace-x25519-vectors.txt")
        return VectorFile(lines: text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init))
    }

    static func load() throws -> VectorFile {
        try shared.get()
    }

    private static func isHexLine(_ line: String) -> Bool {
        let trimmed = line.trimmingSpaces
        return !trimmed.isEmpty && trimmed.utf8.allSatisfy { isHexDigit($0) }
    }

    private static func isHexDigit(_ c: UInt8) -> Bool {
        (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "f"))
    }

    /// The index of the first line at or after `start` that contains `needle`.
    func lineIndex(containing needle: String, from start: Int = 0) throws -> Int {
        guard start < lines.count, let index = lines[start...].firstIndex(where: { $0.contains(needle) }) else {
            throw VectorFileError(description: "fixture has no line containing \(needle.debugDescription)")
        }
        return index
    }

    /// The hex block printed below the first line containing `label` (searching after the line containing
    /// `anchor`, when given). A "(length: N bytes)" note on the label line or the next line is checked.
    /// - Parameters:
    ///   - label: text of the label line, e.g. `"ISK result:"`.
    ///   - anchor: text of an earlier line that scopes the search, e.g. a section heading `"B.1.6."`.
    /// - Returns: the decoded bytes.
    func hexBlock(_ label: String, after anchor: String? = nil) throws -> [UInt8] {
        let start = try anchor.map { try lineIndex(containing: $0) } ?? 0
        let labelIndex = try lineIndex(containing: label, from: start)
        var expectedLength = Self.declaredLength(in: lines[labelIndex])
        var hex = ""
        for line in lines[(labelIndex + 1)...] {
            if hex.isEmpty, let length = Self.declaredLength(in: line), line.trimmingSpaces.hasPrefix("(length:") {
                expectedLength = length
                continue
            }
            if Self.isHexLine(line) {
                hex += line.trimmingSpaces
            } else {
                break
            }
        }
        guard !hex.isEmpty, let bytes = Hex.decode(hex) else {
            throw VectorFileError(description: "no hex block below \(label.debugDescription)")
        }
        if let expectedLength, expectedLength != bytes.count {
            throw VectorFileError(description: "\(label): \(bytes.count) bytes, fixture says \(expectedLength)")
        }
        return bytes
    }

    /// The hex value on a line of the form `key: hex` or `key = hex` (the first such line whose value is hex).
    func inlineHex(_ key: String) throws -> [UInt8] {
        for line in lines {
            let trimmed = line.trimmingSpaces
            for separator in [":", " ="] where trimmed.hasPrefix(key + separator) {
                let value = String(trimmed.dropFirst(key.count + separator.count)).trimmingSpaces
                if Self.isHexLine(value), let bytes = Hex.decode(value) {
                    return bytes
                }
            }
        }
        throw VectorFileError(description: "fixture has no hex line for \(key.debugDescription)")
    }

    /// The N of a "(length: N bytes)" note, if the line has one.
    private static func declaredLength(in line: String) -> Int? {
        guard let range = line.range(of: "(length: ") else { return nil }
        let digits = line[range.upperBound...].prefix(while: { $0.isNumber })
        return Int(digits)
    }

    /// The A.3.3 comparison lines, `lexiographically_larger(b"…", b"…") == True|False`, with the Python byte
    /// literals decoded (only plain characters and octal escapes such as `\0` occur).
    func lexicographicCases() throws -> [(lhs: [UInt8], rhs: [UInt8], expected: Bool)] {
        var cases: [(lhs: [UInt8], rhs: [UInt8], expected: Bool)] = []
        for line in lines where line.contains("lexiographically_larger(b\"") && line.contains("==") {
            let literals = Self.byteLiterals(in: line)
            guard literals.count == 2 else { throw VectorFileError(description: "cannot parse \(line)") }
            let expected: Bool
            if line.hasSuffix("True") {
                expected = true
            } else if line.hasSuffix("False") {
                expected = false
            } else {
                throw VectorFileError(description: "cannot parse \(line)")
            }
            cases.append((literals[0], literals[1], expected))
        }
        return cases
    }

    /// Decodes every `b"…"` literal on a line.
    static func byteLiterals(in line: String) -> [[UInt8]] {
        var result: [[UInt8]] = []
        var bytes = Array(line.utf8)[...]
        while let start = bytes.firstIndex(of: UInt8(ascii: "b")) {
            bytes = bytes[(start + 1)...]
            guard bytes.first == UInt8(ascii: "\"") else { continue }
            bytes = bytes.dropFirst()
            var literal: [UInt8] = []
            while let c = bytes.first, c != UInt8(ascii: "\"") {
                bytes = bytes.dropFirst()
                if c == UInt8(ascii: "\\") {
                    var value: UInt8 = 0
                    var digits = 0
                    while digits < 3, let d = bytes.first, d >= UInt8(ascii: "0"), d <= UInt8(ascii: "7") {
                        value = value * 8 + (d - UInt8(ascii: "0"))
                        bytes = bytes.dropFirst()
                        digits += 1
                    }
                    literal.append(value)
                } else {
                    literal.append(c)
                }
            }
            bytes = bytes.dropFirst()
            result.append(literal)
        }
        return result
    }
}

extension String {
    /// The string without leading and trailing spaces, tabs and carriage returns.
    var trimmingSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        return String(drop(while: isSpace).reversed().drop(while: isSpace).reversed())
    }
}

/// The B.1 inputs, read from the fixture.
struct SuiteInputs {
    let prs: [UInt8]
    let ci: [UInt8]
    let sid: [UInt8]
    let ya: [UInt8]
    let yb: [UInt8]
    let adA: [UInt8]
    let adB: [UInt8]

    static func load() throws -> SuiteInputs {
        let file = try VectorFile.load()
        // PRS, ADa, ADb appear only as Python literals (b'Password', b'ADa', b'ADb'); take them from the inputs
        // lines and check them against the C initializers of B.1.8 below in the tests.
        let prsLine = file.lines[try file.lineIndex(containing: "PRS = b'")]
        guard let prs = prsLine.slice(between: "PRS = b'", and: "'") else {
            throw VectorFileError(description: "cannot parse \(prsLine)")
        }
        let adaLine = file.lines[try file.lineIndex(containing: "ADa = b'")]
        let adbLine = file.lines[try file.lineIndex(containing: "ADb = b'")]
        guard let ada = adaLine.slice(between: "ADa = b'", and: "'"),
            let adb = adbLine.slice(between: "ADb = b'", and: "'")
        else { throw VectorFileError(description: "cannot parse AD lines") }
        return SuiteInputs(
            prs: Array(prs.utf8),
            ci: try file.inlineHex("CI"),
            sid: try file.inlineHex("sid"),
            ya: try file.hexBlock("ya (little endian):", after: "B.1.2."),
            yb: try file.hexBlock("yb (little endian):", after: "B.1.3."),
            adA: Array(ada.utf8),
            adB: Array(adb.utf8)
        )
    }
}

extension String {
    /// The text between the first `start` and the next `end` after it.
    func slice(between start: String, and end: String) -> String? {
        guard let lower = range(of: start), let upper = self[lower.upperBound...].range(of: end) else { return nil }
        return String(self[lower.upperBound..<upper.lowerBound])
    }
}
