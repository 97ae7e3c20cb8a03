import CanonicalJSON
import TestSupport
import Testing

/// Builds random JSON trees and renders them in deliberately non-canonical (but valid) JSON text.
struct RandomJSON {
    var rng: SplitMix64

    /// Scalars that exercise escaping, multi-byte UTF-8, surrogate pairs and UTF-16 ordering.
    static let interestingScalars: [Unicode.Scalar] = [
        "a", "Z", "0", " ", "\"", "\\", "/", "\u{0}", "\u{8}", "\u{9}", "\u{A}", "\u{C}", "\u{D}", "\u{1F}", "\u{7F}",
        "\u{80}", "é", "\u{30A}", "\u{C5}", "€", "\u{D7FF}", "\u{E000}", "\u{FB33}", "\u{FFFD}", "\u{FFFF}",
        "😂", "\u{10000}", "\u{10FFFF}", "𝄞",
    ]

    mutating func int(_ bound: Int) -> Int {
        Int(rng.next() % UInt64(bound))
    }

    mutating func string() -> String {
        var scalars = String.UnicodeScalarView()
        for _ in 0..<int(8) {
            switch int(4) {
            case 0:
                scalars.append(Unicode.Scalar(UInt8(0x20 + int(0x5F))))
            case 1:
                // Any scalar at all (skipping the surrogate range).
                var value = UInt32(truncatingIfNeeded: rng.next()) % 0x11_0000
                if (0xD800...0xDFFF).contains(value) { value -= 0x800 }
                if let scalar = Unicode.Scalar(value) { scalars.append(scalar) }
            default:
                scalars.append(Self.interestingScalars[int(Self.interestingScalars.count)])
            }
        }
        return String(scalars)
    }

    mutating func double() -> Double {
        switch int(4) {
        case 0:
            return Double(int(2_000_001) - 1_000_000)
        case 1:
            let special: [Double] = [
                0.0, -0.0, .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .greatestFiniteMagnitude, 1e21, 1e-7, 0.1,
            ]
            return special[int(special.count)]
        default:
            while true {
                let value = Double(bitPattern: rng.next())
                if value.isFinite { return value }
            }
        }
    }

    /// A random tree at most `depth` containers deep; containers get more likely towards the root.
    mutating func value(depth: Int) -> JSONValue {
        let kind = depth <= 0 ? int(4) : int(4 + 2 * depth)
        switch kind {
        case 0: return [.null, .bool(true), .bool(false)][int(3)]
        case 1: return .number(double())
        case 2, 3: return .string(string())
        case let container where container % 2 == 0:
            return .array((0..<int(6)).map { _ in value(depth: depth - 1) })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<int(6) {
                members[string()] = value(depth: depth - 1)
            }
            return .object(members)
        }
    }

    /// Valid, non-canonical JSON for `value`: random whitespace, random escapes (including surrogate pairs and
    /// uppercase hex), members in random order, numbers in Swift's `description` notation.
    mutating func sloppyText(_ value: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        writeSloppy(value, to: &out)
        whitespace(&out)
        return out
    }

    private mutating func whitespace(_ out: inout [UInt8]) {
        for _ in 0..<int(3) {
            out.append([0x20, 0x09, 0x0A, 0x0D][int(4)])
        }
    }

    private mutating func writeSloppy(_ value: JSONValue, to out: inout [UInt8]) {
        whitespace(&out)
        switch value {
        case .null: out += Array("null".utf8)
        case .bool(let flag): out += Array((flag ? "true" : "false").utf8)
        case .number(let number): out += Array(number.doubleValue.description.utf8)
        case .string(let text): writeSloppyString(text, to: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                writeSloppy(element, to: &out)
                whitespace(&out)
            }
            if elements.isEmpty { whitespace(&out) }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            var pairs = Array(members)
            pairs.shuffle(using: &rng)
            for (index, pair) in pairs.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                whitespace(&out)
                writeSloppyString(pair.key, to: &out)
                whitespace(&out)
                out.append(UInt8(ascii: ":"))
                writeSloppy(pair.value, to: &out)
                whitespace(&out)
            }
            if members.isEmpty { whitespace(&out) }
            out.append(UInt8(ascii: "}"))
        }
    }

    private mutating func writeSloppyString(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for scalar in text.unicodeScalars {
            let mustEscape = scalar.value < 0x20 || scalar == "\"" || scalar == "\\"
            if mustEscape || int(4) == 0 {
                if scalar == "/" && int(2) == 0 {
                    out += Array(#"\/"#.utf8)
                    continue
                }
                for unit in String(scalar).utf16 {
                    var hex = String(unit, radix: 16, uppercase: int(2) == 0)
                    hex = String(repeating: "0", count: 4 - hex.count) + hex
                    out += Array(("\\u" + hex).utf8)
                }
            } else {
                out += Array(String(scalar).utf8)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

@Suite("Round-trip properties")
struct RoundTripPropertyTests {
    @Test("canonicalBytes → parse gives an equal value, and canonicalize is idempotent", arguments: [1, 2, 3, 4])
    func roundTrip(seed: UInt64) throws {
        var random = RandomJSON(rng: SplitMix64(seed: seed))
        let parser = JSONParser()
        var totalBytes = 0
        for iteration in 0..<1_000 {
            let value = random.value(depth: 4)
            let canonical = value.canonicalBytes()
            totalBytes += canonical.count
            let parsed = try parser.parse(canonical)
            #expect(parsed == value, "seed \(seed) iteration \(iteration)")
            #expect(parsed.canonicalBytes() == canonical, "seed \(seed) iteration \(iteration)")
            #expect(try CanonicalJSON.canonicalize(canonical) == canonical, "seed \(seed) iteration \(iteration)")

            let sloppy = random.sloppyText(value)
            let fromSloppy = try CanonicalJSON.canonicalize(sloppy)
            let sloppyText = String(decoding: sloppy, as: UTF8.self)
            #expect(fromSloppy == canonical, "seed \(seed) iteration \(iteration): \(sloppyText)")
        }
        // The generator really produces sizeable documents (guards against a degenerate generator).
        #expect(totalBytes > 100_000, "only \(totalBytes) bytes generated")
    }

    @Test("mutated documents either parse to a canonical fixed point or fail with an in-range offset")
    func mutations() throws {
        var random = RandomJSON(rng: SplitMix64(seed: 99))
        let parser = JSONParser()
        let alphabet =
            Array(#"{}[],:"\\/ 0123456789.eE+-tfnulrsaxu"#.utf8)
            + [0x00, 0x1F, 0x7F, 0x80, 0xBF, 0xC0, 0xED, 0xF4, 0xFF]
        var accepted = 0
        for iteration in 0..<2_000 {
            var bytes = random.sloppyText(random.value(depth: 3))
            for _ in 0..<(1 + random.int(3)) where !bytes.isEmpty {
                let position = random.int(bytes.count)
                switch random.int(3) {
                case 0: bytes[position] = alphabet[random.int(alphabet.count)]
                case 1: bytes.remove(at: position)
                default: bytes.insert(alphabet[random.int(alphabet.count)], at: position)
                }
            }
            do {
                let value = try parser.parse(bytes)
                accepted += 1
                let canonical = value.canonicalBytes()
                #expect(try CanonicalJSON.canonicalize(canonical) == canonical, "iteration \(iteration)")
            } catch {
                #expect(error.offset >= 0 && error.offset <= bytes.count, "iteration \(iteration): \(error)")
                #expect(error.message.contains("at byte \(error.offset)"), "iteration \(iteration): \(error)")
            }
        }
        #expect(accepted > 0)
    }

    @Test("random finite doubles format to strings that parse back to the same bits", arguments: [7, 8])
    func numberRoundTrip(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let parser = JSONParser()
        var checked = 0
        while checked < 5_000 {
            let value = Double(bitPattern: rng.next())
            guard value.isFinite else { continue }
            checked += 1
            let text = CanonicalJSON.formatNumber(value)
            let parsed = try #require(try parser.parse(text).doubleValue)
            #expect(parsed == value, "\(value.bitPattern) -> \(text)")
        }
    }
}
