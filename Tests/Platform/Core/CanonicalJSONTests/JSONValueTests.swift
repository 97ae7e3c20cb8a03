import CanonicalJSON
import Testing

@Suite("JSONValue")
struct JSONValueTests {
    @Test("accessors return payloads only for their own case")
    func accessors() {
        let value: JSONValue = ["s": "text", "n": 1.5, "b": true, "a": [1, nil], "o": ["k": "v"], "z": nil]
        #expect(value["s"]?.stringValue == "text")
        #expect(value["n"]?.doubleValue == 1.5)
        #expect(value["b"]?.boolValue == true)
        #expect(value["a"]?.arrayValue == [1, .null])
        #expect(value["a"]?[1]?.isNull == true)
        #expect(value["a"]?[2] == nil)
        #expect(value["o"]?.objectValue == ["k": "v"])
        #expect(value["z"] == .some(.null))
        #expect(value["missing"] == nil)
        #expect(value["s"]?.doubleValue == nil)
        #expect(value.stringValue == nil)
        #expect(JSONValue.string("x")["k"] == nil)
        #expect(value.objectValue?.count == 6)
    }

    @Test("literals build the expected cases")
    func literals() {
        let value: JSONValue = [nil, true, 3, 2.5, "s", [], [:]]
        #expect(
            value == .array([.null, .bool(true), .number(3), .number(2.5), .string("s"), .array([]), .object([:])]))
    }

    @Test("equality is exact: canonically equivalent strings are different values")
    func exactEquality() {
        let composed = JSONValue.string("\u{C5}")
        let decomposed = JSONValue.string("A\u{30A}")
        #expect(composed != decomposed)
        #expect(composed.canonicalBytes() != decomposed.canonicalBytes())
        #expect(JSONValue.object(["\u{C5}": 1]) != JSONValue.object(["A\u{30A}": 1]))
        #expect(JSONValue.object(["\u{C5}": 1]) == JSONValue.object(["\u{C5}": 1]))
        #expect(JSONValue.number(0) == JSONValue.number(-0.0))
        #expect(JSONValue.number(0).hashValue == JSONValue.number(-0.0).hashValue)
        let set: Set<JSONValue> = [["a": [1, 2]], ["a": [1, 2]], ["a": [2, 1]]]
        #expect(set.count == 2)
    }

    @Test("members sort by UTF-16 code units, not by scalars or Swift String order")
    func utf16Ordering() {
        // U+E000 is one unit 0xE000; U+1F602 is 0xD83D 0xDE02, so it sorts first in UTF-16 order
        // although its scalar value (and UTF-8 encoding) is larger.
        let value: JSONValue = ["\u{E000}": 1, "😂": 2, "a": 3, "B": 4, "\u{C5}": 5, "A\u{30A}x": 6]
        #expect(value.canonicalString == "{\"A\u{30A}x\":6,\"B\":4,\"a\":3,\"\u{C5}\":5,\"😂\":2,\"\u{E000}\":1}")
    }

    @Test(
        "string escaping is minimal with lowercase hex",
        arguments: [
            ("\u{0}\u{1}\u{1F}", #""\u0000\u0001\u001f""#), ("\u{8}\u{9}\u{A}\u{C}\u{D}", #""\b\t\n\f\r""#),
            ("\"\\/", #""\"\\/""#), ("\u{7F}\u{80}\u{2028}", "\"\u{7F}\u{80}\u{2028}\""),
            ("</script>", #""</script>""#),
            ("\u{B}\u{1B}", #""\u000b\u001b""#),
        ] as [(String, String)]
    )
    func escaping(_ raw: String, _ expected: String) {
        #expect(Array(JSONValue.string(raw).canonicalBytes()) == Array(expected.utf8))
    }

    @Test("Codable conformance passes JSONValue through JSONValueEncoder/Decoder unchanged")
    func codableConformance() throws {
        struct Envelope: Codable, Equatable {
            var kind: String
            var payload: JSONValue
        }
        let envelope = Envelope(kind: "k", payload: ["x": [1, "A\u{30A}", nil, ["y": false]]])
        let encoded = try JSONValueEncoder().encode(envelope)
        #expect(encoded == ["kind": "k", "payload": ["x": [1, "A\u{30A}", nil, ["y": false]]]])
        #expect(try JSONValueDecoder().decode(Envelope.self, from: encoded) == envelope)
    }
}
