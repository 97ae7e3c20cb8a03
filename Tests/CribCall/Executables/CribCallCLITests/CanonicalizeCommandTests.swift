import CanonicalJSON
import Foundation
import TestSupport
import Testing

@Suite("cribcall canonicalize")
struct CanonicalizeCommandTests {
    func canonicalize(_ input: String) async throws -> Subprocess.Result {
        try await Subprocess.run(try Subprocess.builtProduct("cribcall"), ["canonicalize"], stdin: Array(input.utf8))
    }

    @Test("the acceptance example prints the canonical bytes with no trailing newline")
    func acceptanceExample() async throws {
        let result = try await canonicalize(#"{"b":[1E30,4.50,2e-3],"a":"\u20ac"}"# + "\n")
        #expect(result.status == 0)
        #expect(result.stdoutText == #"{"a":"€","b":[1e+30,4.5,0.002]}"#)
        #expect(result.stderr.isEmpty)
    }

    @Test(
        "invalid input exits 2 with one line on stderr and nothing on stdout",
        arguments: [
            (#"{"a":1,"a":2}"#, "duplicate key"),
            (#"["\ud800"]"#, "surrogate"),
            ("[1e400]", "finite"),
            ("", "at byte 0"),
            ("{\"a\":", "at byte"),
            ("[01]", "leading zero at byte 1"),
        ])
    func invalidInput(input: String, expected: String) async throws {
        let result = try await canonicalize(input)
        #expect(result.status == 2)
        #expect(result.stdout.isEmpty)
        let lines = result.stderrText.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 2 && lines[1].isEmpty, "exactly one line: \(result.stderrText)")
        #expect(result.stderrText.contains(expected), "stderr: \(result.stderrText)")
    }

    @Test("the CLI and the library agree on every published RFC 8785 input")
    func vectorsThroughCLI() async throws {
        let text = try Fixtures.text("jcs-vectors.txt")
        let inputs = text.components(separatedBy: "######## testdata/input/").dropFirst().map { block in
            String(block.drop { $0 != "\n" }.dropFirst().prefix { $0 != "#" })
        }
        #expect(inputs.count == 6)
        for input in inputs {
            let result = try await canonicalize(input)
            #expect(result.status == 0)
            #expect(result.stdout == (try CanonicalJSON.canonicalize(Array(input.utf8))))
        }
    }
}

/// Our canonicalizer against an independent one nobody here wrote: the `rfc8785` package from PyPI.
@Suite("CanonicalJSON agrees with an independent RFC 8785 implementation (Python rfc8785)")
struct IndependentJCSTests {
    @Test(
        "2,000 random documents canonicalize to the same bytes",
        .enabled(if: InteropPeers.pythonAvailable(for: "the rfc8785 cross-check")))
    func agreesWithPython() async throws {
        let python = try #require(InteropPeers.python, "the interop venv is missing: run `make test`")
        var generator = SplitMix64(seed: 0xC0FFEE)
        var documents: [String] = []
        for _ in 0..<2000 {
            documents.append(randomDocument(&generator, depth: 0).canonicalString)
        }
        // Feed the documents in a non-canonical rendering so both sides really do the work.
        let input = documents.map { reorder($0) }.joined(separator: "\n") + "\n"
        let script = """
            # JCS numbers are IEEE doubles: read integers as floats, as an I-JSON reader does.
            import sys, json, rfc8785
            for line in sys.stdin:
                sys.stdout.buffer.write(rfc8785.dumps(json.loads(line, parse_int=float)) + b"\\n")
            """
        let result = try await Subprocess.run(python, ["-c", script], stdin: Array(input.utf8))
        #expect(result.status == 0, "python failed: \(result.stderrText)")
        let theirs = result.stdoutText.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(theirs.count == documents.count)
        for (index, (ours, other)) in zip(documents, theirs).enumerated() {
            #expect(ours == String(other), "document \(index) differs")
        }
    }

    /// Re-renders canonical JSON with its object members reversed and spaces added.
    func reorder(_ canonical: String) -> String {
        guard let value = try? JSONParser().parse(Array(canonical.utf8)) else { return canonical }
        return render(value)
    }

    func render(_ value: JSONValue) -> String {
        switch value {
        case .object(let members):
            let parts = members.keys.sorted().reversed().map { key in
                JSONValue.string(key).canonicalString + " : " + render(members[key]!)
            }
            return "{ " + parts.joined(separator: " , ") + " }"
        case .array(let items):
            return "[ " + items.map(render).joined(separator: ", ") + " ]"
        default:
            return value.canonicalString
        }
    }

    func randomDocument(_ g: inout SplitMix64, depth: Int) -> JSONValue {
        let pick = depth > 3 ? g.next() % 4 : g.next() % 6
        switch pick {
        case 0: return .null
        case 1: return .bool(g.next() % 2 == 0)
        case 2: return .number(randomNumber(&g))
        case 3: return .string(randomString(&g))
        case 4: return .array((0..<Int(g.next() % 5)).map { _ in randomDocument(&g, depth: depth + 1) })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<Int(g.next() % 6) { members[randomString(&g)] = randomDocument(&g, depth: depth + 1) }
            return .object(members)
        }
    }

    func randomNumber(_ g: inout SplitMix64) -> Double {
        switch g.next() % 4 {
        case 0: return Double(Int64(bitPattern: g.next()) % 1_000_000)
        case 1: return Double(Int64(bitPattern: g.next()) % 1_000_000) / 1000
        case 2:
            while true {
                let value = Double(bitPattern: g.next())
                // Python's json prints integral floats beyond 2^53 fine; keep every finite value.
                if value.isFinite { return value }
            }
        default: return Double(g.next() % 100) * pow(10, Double(Int(g.next() % 60) - 30))
        }
    }

    func randomString(_ g: inout SplitMix64) -> String {
        let alphabet: [Unicode.Scalar] = [
            "a", "b", "Z", "0", " ", "\"", "\\", "/", "\u{7}", "\n", "\u{1F}", "\u{7F}",
            "\u{80}", "é", "€", "\u{FFFF}", "😀", "\u{10FFFF}", "\u{0301}", "ß",
        ]
        var scalars = String.UnicodeScalarView()
        for _ in 0..<Int(g.next() % 8) { scalars.append(alphabet[Int(g.next() % UInt64(alphabet.count))]) }
        return String(scalars)
    }
}
