import Testing
import ToukanCore

/// `Range: bytes=…` against a 1,000-byte file, as RFC 9110 §14.1.2 reads it.
@Suite("Byte ranges for the audio player")
struct ByteRangeRequestTests {
    @Test(arguments: [
        ("bytes=0-499", ByteRangeRequest.partial(0...499)),
        ("bytes=500-", .partial(500...999)),
        ("bytes=-200", .partial(800...999)),
        ("bytes=-5000", .partial(0...999)),
        ("bytes=900-5000", .partial(900...999)),
        ("bytes=999-999", .partial(999...999)),
        ("Bytes=10-19", .partial(10...19)),
        ("bytes=1000-", .unsatisfiable),
        ("bytes=1000-2000", .unsatisfiable),
        ("bytes=-0", .unsatisfiable),
    ])
    func oneRange(header: String, expected: ByteRangeRequest) {
        #expect(ByteRangeRequest(header: header, size: 1_000) == expected, "\(header)")
    }

    @Test(
        "the whole file for what is absent, several ranges, another unit, or unreadable",
        arguments: [
            nil, "", "bytes=0-1,5-9", "items=0-9", "bytes=9-0", "bytes=a-b", "bytes=-", "bytes=--5", "bytes=+1-2",
            "bytes=1-2-3", "bytes=99999999999999999999-", "bytes=" + String(repeating: "0", count: 300) + "-",
        ])
    func whole(header: String?) {
        #expect(ByteRangeRequest(header: header, size: 1_000) == .whole, "\(header ?? "nil")")
    }

    @Test("Content-Range for each answer; an empty file satisfies no range")
    func contentRange() {
        #expect(ByteRangeRequest.partial(10...19).contentRange(size: 1_000) == "bytes 10-19/1000")
        #expect(ByteRangeRequest.unsatisfiable.contentRange(size: 1_000) == "bytes */1000")
        #expect(ByteRangeRequest.whole.contentRange(size: 1_000) == nil)
        #expect(ByteRangeRequest(header: "bytes=0-", size: 0) == .unsatisfiable)
        #expect(ByteRangeRequest(header: "bytes=-1", size: 0) == .unsatisfiable)
    }
}
