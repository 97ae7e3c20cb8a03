import ServiceDiscovery
import Testing

/// TXT records on the wire (RFC 6763 §6): encoded in order, parsed strictly and bounded.
struct TXTRecordTests {
    static func wire(_ strings: [String]) -> [UInt8] {
        strings.flatMap { [UInt8($0.utf8.count)] + Array($0.utf8) }
    }

    @Test("Entries are encoded in order, boolean attributes as a bare key, and parse back the same")
    func roundTrip() throws {
        var record: TXTRecord = ["path": "/ws", "version": "1", "empty": ""]
        record.entries.append(.init(key: "flag", value: nil))
        let bytes = try record.encoded()
        #expect(bytes == Self.wire(["path=/ws", "version=1", "empty=", "flag"]))
        #expect(TXTRecord(parsing: bytes) == record)
        #expect(try TXTRecord().encoded() == [])
    }

    @Test("Lookups ignore the key's case and take the first occurrence; a boolean attribute has no value")
    func lookup() throws {
        let record = try #require(TXTRecord(parsing: Self.wire(["Path=/a", "path=/b", "flag", "x==y", ""])))
        #expect(record["PATH"] == "/a")
        #expect(record["flag"] == nil && record.entries.contains(.init(key: "flag", value: nil)))
        #expect(record["x"] == "=y")
        #expect(record["missing"] == nil)
        #expect(record.entries.count == 4, "the empty string is skipped")
    }

    @Test(
        "Truncated, oversized or non-UTF-8 records are refused",
        arguments: [
            [40] + Array("k=v".utf8),
            wire(Array(repeating: String(repeating: "k", count: 254), count: 36)),
            [3, UInt8(ascii: "k"), UInt8(ascii: "="), 0xFF],
            [2, 0xC3, UInt8(ascii: "=")],
        ])
    func refused(bytes: [UInt8]) {
        #expect(TXTRecord(parsing: bytes) == nil)
    }

    @Test("An entry over 255 bytes cannot be encoded, and the error names it")
    func oversizedEntry() {
        let record: TXTRecord = ["ok": "1", "long": String(repeating: "v", count: 251)]
        let error = #expect(throws: ServiceDiscoveryError.self) { try record.encoded() }
        #expect(error?.code == .invalidAdvertisement)
        #expect(error?.message.contains("long") == true)
    }
}
