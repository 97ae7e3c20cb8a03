import CanonicalJSON
import Testing

private enum Color: String, Codable, Equatable {
    case red, green
}

private enum Level: Int, Codable, Equatable {
    case low = 1
    case high = 2
}

private struct Address: Codable, Equatable {
    var street: String
    var zip: String?
}

private struct Person: Codable, Equatable {
    var name: String
    var age: Int
    var height: Double
    var ratio: Float
    var tags: [String]
    var address: Address?
    var previous: [Address]
    var nickname: String?
    var color: Color
    var level: Level
    var matrix: [[Int8]]
    var scores: [String: UInt32]
    var flags: Set<Bool>
    var extra: JSONValue?
    var big: UInt64
    var negative: Int64
}

private struct Counter: Codable, Equatable {
    var count: Int
}

private class Base: Codable {
    var id: Int
    init(id: Int) { self.id = id }
}

private final class Derived: Base {
    var label: String

    init(id: Int, label: String) {
        self.label = label
        super.init(id: id)
    }

    enum CodingKeys: String, CodingKey {
        case label
    }

    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        label = try container.decode(String.self, forKey: .label)
        try super.init(from: container.superDecoder())
    }

    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(label, forKey: .label)
        try super.encode(to: container.superEncoder())
    }
}

/// The coding path rendered as `a.b.Index 1`.
private func pathString(_ path: [any CodingKey]) -> String {
    path.map { $0.intValue.map { "Index \($0)" } ?? $0.stringValue }.joined(separator: ".")
}

private func decodingPath(_ error: any Error) -> String? {
    switch error as? DecodingError {
    case .dataCorrupted(let context), .typeMismatch(_, let context), .valueNotFound(_, let context):
        pathString(context.codingPath)
    case .keyNotFound(let key, let context):
        pathString(context.codingPath + [key])
    default:
        nil
    }
}

@Suite("JSONValueEncoder and JSONValueDecoder")
struct CodableTests {
    private let sample = Person(
        name: "Zoë \"Z\"",
        age: 42,
        height: 1.75,
        ratio: 0.1,
        tags: ["a", "b\n"],
        address: Address(street: "Main St", zip: nil),
        previous: [Address(street: "Old", zip: "12345")],
        nickname: nil,
        color: .green,
        level: .high,
        matrix: [[1, -2], [], [127]],
        scores: ["x": 1, "😂": 4_000_000_000],
        flags: [true],
        extra: ["k": [1, nil]],
        big: 1 << 53,
        negative: -(1 << 53)
    )

    @Test("nested structs with optionals, arrays, enums and dictionaries round-trip")
    func roundTrip() throws {
        let value = try JSONValueEncoder().encode(sample)
        #expect(value["name"] == "Zoë \"Z\"")
        #expect(value["age"] == 42)
        #expect(value["ratio"] == 0.1)
        #expect(value["color"] == "green")
        #expect(value["level"] == 2)
        #expect(value["nickname"] == nil)
        #expect(value["address"] == ["street": "Main St"])
        #expect(value["matrix"] == [[1, -2], [], [127]])
        #expect(value["scores"] == ["x": 1, "😂": 4_000_000_000])
        #expect(value["big"] == .number(9_007_199_254_740_992))

        let decoded = try JSONValueDecoder().decode(Person.self, from: value)
        #expect(decoded == sample)

        // Through canonical text and back.
        let reparsed = try JSONParser().parse(value.canonicalBytes())
        #expect(try JSONValueDecoder().decode(Person.self, from: reparsed) == sample)
    }

    @Test("the canonical text of an encoded value is stable")
    func canonicalText() throws {
        let value = try JSONValueEncoder().encode(Address(street: "x", zip: "9"))
        #expect(value.canonicalString == #"{"street":"x","zip":"9"}"#)
        #expect(try JSONValueEncoder().encode([3, 1]).canonicalString == "[3,1]")
        #expect(try JSONValueEncoder().encode("s") == "s")
        #expect(try JSONValueEncoder().encode(Optional<Int>.none) == nil)
        #expect(try JSONValueEncoder().encode(Level.low) == 1)
    }

    @Test("optionals decode as nil from a missing key or null")
    func optionals() throws {
        let missing: JSONValue = ["street": "s"]
        let null: JSONValue = ["street": "s", "zip": nil]
        #expect(try JSONValueDecoder().decode(Address.self, from: missing) == Address(street: "s", zip: nil))
        #expect(try JSONValueDecoder().decode(Address.self, from: null) == Address(street: "s", zip: nil))
        #expect(try JSONValueDecoder().decode([Int?].self, from: [1, nil, 3]) == [1, nil, 3])
    }

    @Test("class hierarchies use superEncoder and superDecoder")
    func superCoders() throws {
        let value = try JSONValueEncoder().encode(Derived(id: 7, label: "l"))
        #expect(value == ["label": "l", "super": ["id": 7]])
        let decoded = try JSONValueDecoder().decode(Derived.self, from: value)
        #expect(decoded.id == 7 && decoded.label == "l")
    }

    @Test("an integer cannot be decoded from 1.5")
    func integerFromFraction() throws {
        let error = #expect(throws: DecodingError.self) {
            try JSONValueDecoder().decode(Counter.self, from: ["count": 1.5])
        }
        guard case .dataCorrupted = error else {
            Issue.record("expected dataCorrupted, got \(String(describing: error))")
            return
        }
        #expect(error.flatMap(decodingPath) == "count")
    }

    @Test(
        "integers out of range or beyond 2^53 are refused when decoding",
        arguments: [
            (JSONValue.number(300), "Int8"), (.number(-1), "UInt"), (.number(1_152_921_504_606_846_976), "Int64"),
            (.number(9_007_199_254_740_994), "Int"), (.number(.infinity), "Int"), (.number(1e-300), "Int32"),
        ] as [(JSONValue, String)]
    )
    func integerRange(_ value: JSONValue, _ type: String) throws {
        let decoder = JSONValueDecoder()
        let error: DecodingError? =
            switch type {
            case "Int8": #expect(throws: DecodingError.self) { try decoder.decode([Int8].self, from: [value]) }
            case "UInt": #expect(throws: DecodingError.self) { try decoder.decode([UInt].self, from: [value]) }
            case "Int64": #expect(throws: DecodingError.self) { try decoder.decode([Int64].self, from: [value]) }
            case "Int32": #expect(throws: DecodingError.self) { try decoder.decode([Int32].self, from: [value]) }
            default: #expect(throws: DecodingError.self) { try decoder.decode([Int].self, from: [value]) }
            }
        guard case .dataCorrupted = error else {
            Issue.record("expected dataCorrupted, got \(String(describing: error))")
            return
        }
        #expect(error.flatMap(decodingPath) == "Index 0")
    }

    @Test("integral doubles up to 2^53 decode into integer types")
    func integerSuccess() throws {
        let decoder = JSONValueDecoder()
        #expect(try decoder.decode(Int.self, from: .number(9_007_199_254_740_992)) == 1 << 53)
        #expect(try decoder.decode(Int8.self, from: -128) == -128)
        #expect(try decoder.decode(UInt8.self, from: .number(-0.0)) == 0)
        #expect(try decoder.decode(UInt64.self, from: 12345) == 12345)
    }

    @Test("a missing key is keyNotFound with its path")
    func missingKey() throws {
        let error = #expect(throws: DecodingError.self) {
            try JSONValueDecoder().decode(Person.self, from: ["age": 3])
        }
        guard case .keyNotFound(let key, _) = error else {
            Issue.record("expected keyNotFound, got \(String(describing: error))")
            return
        }
        #expect(key.stringValue == "name")

        let nested = #expect(throws: DecodingError.self) {
            try JSONValueDecoder().decode([String: Address].self, from: ["home": ["zip": "1"]])
        }
        #expect(nested.flatMap(decodingPath) == "home.street")
    }

    @Test("type mismatches and nulls carry their coding path")
    func mismatches() throws {
        let mismatch = #expect(throws: DecodingError.self) {
            try JSONValueDecoder().decode([[Int]].self, from: [[1], ["x"]])
        }
        guard case .typeMismatch = mismatch else {
            Issue.record("expected typeMismatch, got \(String(describing: mismatch))")
            return
        }
        #expect(mismatch.flatMap(decodingPath) == "Index 1.Index 0")

        let null = #expect(throws: DecodingError.self) {
            try JSONValueDecoder().decode(Address.self, from: ["street": nil])
        }
        guard case .valueNotFound = null else {
            Issue.record("expected valueNotFound, got \(String(describing: null))")
            return
        }
        #expect(null.flatMap(decodingPath) == "street")

        #expect(throws: DecodingError.self) { try JSONValueDecoder().decode(Bool.self, from: 1) }
        #expect(throws: DecodingError.self) { try JSONValueDecoder().decode(Double.self, from: "1") }
        #expect(throws: DecodingError.self) { try JSONValueDecoder().decode([Int].self, from: [:]) }
        #expect(throws: DecodingError.self) { try JSONValueDecoder().decode(Float.self, from: 1e300) }
        #expect(throws: DecodingError.self) { try JSONValueDecoder().decode(Color.self, from: "blue") }
    }

    @Test("2^60 is refused when encoding; ±2^53 is accepted")
    func largeIntegers() throws {
        let error = #expect(throws: EncodingError.self) {
            try JSONValueEncoder().encode(Counter(count: 1 << 60))
        }
        guard case .invalidValue(_, let context) = error else {
            Issue.record("expected invalidValue, got \(String(describing: error))")
            return
        }
        #expect(pathString(context.codingPath) == "count")

        #expect(throws: EncodingError.self) { try JSONValueEncoder().encode(UInt64(1 << 53) + 1) }
        #expect(throws: EncodingError.self) { try JSONValueEncoder().encode([Int64.min]) }
        #expect(throws: EncodingError.self) { try JSONValueEncoder().encode(UInt64.max) }
        #expect(try JSONValueEncoder().encode(-(1 << 53)) == .number(-9_007_199_254_740_992))
        #expect(try JSONValueEncoder().encode([UInt64(1 << 53)]) == [.number(9_007_199_254_740_992)])
    }

    @Test("non-finite floating-point values are refused when encoding")
    func nonFinite() throws {
        #expect(throws: EncodingError.self) { try JSONValueEncoder().encode(Double.nan) }
        #expect(throws: EncodingError.self) { try JSONValueEncoder().encode(["x": Double.infinity]) }
        #expect(throws: EncodingError.self) { try JSONValueEncoder().encode([Float.infinity]) }
    }

    @Test("a top-level value that encodes nothing is refused")
    func emptyTopLevel() throws {
        struct Nothing: Encodable {
            func encode(to encoder: any Encoder) throws {}
        }
        #expect(throws: EncodingError.self) { try JSONValueEncoder().encode(Nothing()) }
        #expect(try JSONValueEncoder().encode([Nothing()]) == [[:]])
    }

    @Test("userInfo reaches Codable implementations")
    func userInfo() throws {
        struct Probe: Codable {
            static let key = CodingUserInfoKey(rawValue: "probe")!
            var seen: String
            init(seen: String) { self.seen = seen }
            init(from decoder: any Decoder) throws {
                seen = decoder.userInfo[Self.key] as? String ?? "none"
            }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.singleValueContainer()
                try container.encode(encoder.userInfo[Self.key] as? String ?? "none")
            }
        }
        var encoder = JSONValueEncoder()
        encoder.userInfo[Probe.key] = "enc"
        #expect(try encoder.encode(Probe(seen: "")) == "enc")
        var decoder = JSONValueDecoder()
        decoder.userInfo[Probe.key] = "dec"
        #expect(try decoder.decode(Probe.self, from: nil).seen == "dec")
    }
}
