import CanonicalJSON
import TestSupport
import Testing

/// One RFC 8785 test vector from `Tests/Fixtures/jcs-vectors.txt`.
struct JCSVector: Sendable {
    var name: String
    var input: [UInt8]
    /// The expected canonical bytes, from the authoritative `outhex` section.
    var expected: [UInt8]

    static let names = ["arrays", "structures", "values", "unicode", "weird", "french"]

    /// Reads all vectors. Sections start with `######## testdata/<kind>/<name>.<ext>` on their own line; an
    /// input section runs up to the next marker, an outhex section up to the first `#` or blank line.
    static func loadAll() throws -> [String: JCSVector] {
        let file = try Fixtures.bytes("jcs-vectors.txt")
        let marker = Array("######## testdata/".utf8)
        var starts: [Int] = []
        var index = 0
        while index + marker.count <= file.count {
            if file[index..<(index + marker.count)].elementsEqual(marker) {
                starts.append(index)
                index += marker.count
            } else {
                index += 1
            }
        }
        var inputs: [String: [UInt8]] = [:]
        var outputs: [String: [UInt8]] = [:]
        for (position, start) in starts.enumerated() {
            let end = position + 1 < starts.count ? starts[position + 1] : file.count
            let section = file[(start + marker.count)..<end]
            guard let newline = section.firstIndex(of: 0x0A) else { continue }
            let header = String(decoding: section[..<newline], as: UTF8.self)
            let body = section[(newline + 1)...]
            let path = header.split(separator: " ").first.map(String.init) ?? header
            let parts = path.split(separator: "/")
            guard parts.count == 2 else { continue }
            let name = String(parts[1].split(separator: ".")[0])
            switch parts[0] {
            case "input":
                inputs[name] = Array(body)
            case "outhex":
                var hexText: [UInt8] = []
                var previous: UInt8 = 0
                for byte in body {
                    if byte == UInt8(ascii: "#") || (byte == 0x0A && previous == 0x0A) { break }
                    hexText.append(byte)
                    previous = byte
                }
                outputs[name] = Hex.decode(String(decoding: hexText, as: UTF8.self))
            default:
                continue
            }
        }
        var vectors: [String: JCSVector] = [:]
        for (name, input) in inputs {
            if let expected = outputs[name] {
                vectors[name] = JCSVector(name: name, input: input, expected: expected)
            }
        }
        return vectors
    }
}

@Suite("RFC 8785 test vectors")
struct JCSVectorTests {
    @Test("the fixture holds exactly the six published vectors")
    func fixtureIsComplete() throws {
        let vectors = try JCSVector.loadAll()
        #expect(Set(vectors.keys) == Set(JCSVector.names))
        for vector in vectors.values {
            #expect(!vector.input.isEmpty && !vector.expected.isEmpty, "\(vector.name)")
        }
    }

    @Test("canonicalize matches the outhex bytes exactly", arguments: JCSVector.names)
    func vector(_ name: String) throws {
        let vector = try #require(try JCSVector.loadAll()[name])
        let output = try CanonicalJSON.canonicalize(vector.input)
        #expect(Hex.encode(output) == Hex.encode(vector.expected))
        #expect(output.last != 0x0A)
        // Canonical output is a fixed point.
        #expect(try CanonicalJSON.canonicalize(output) == vector.expected)
        // The value-level API agrees with the byte-level one.
        let value = try JSONParser().parse(vector.input)
        #expect(value.canonicalBytes() == vector.expected)
        #expect(Array(value.canonicalString.utf8) == vector.expected)
    }

    @Test("the RFC acceptance example")
    func acceptanceExample() throws {
        let input = #"{"b":[1E30,4.50,2e-3],"a":"\u20ac"}"#
        let output = try CanonicalJSON.canonicalize(Array(input.utf8))
        #expect(String(decoding: output, as: UTF8.self) == #"{"a":"€","b":[1e+30,4.5,0.002]}"#)
        #expect(Hex.encode(output) == Hex.encode(Array(#"{"a":"€","b":[1e+30,4.5,0.002]}"#.utf8)))
    }

    @Test("unicode.json keeps A + U+030A unnormalized in the value")
    func unnormalizedValueIsKept() throws {
        let value = try JSONParser().parse(#"{"Unnormalized Unicode":"A\u030a"}"#)
        #expect(value["Unnormalized Unicode"]?.stringValue?.unicodeScalars.map(\.value) == [0x41, 0x30A])
        #expect(Hex.encode(value.canonicalBytes()).hasSuffix("2241cc8a227d"))
    }
}
