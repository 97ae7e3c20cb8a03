import Foundation
import Testing
import ToukanCore

@Suite("Audio sniffing for the 415, and the idempotency rule")
struct AudioAndIdempotencyTests {
    /// An ftyp box: size, "ftyp", major brand, minor version 0, compatible brands.
    static func ftyp(_ major: String, _ compatible: [String] = []) -> [UInt8] {
        let size = 16 + 4 * compatible.count
        return [0, 0, 0, UInt8(size)] + Array("ftyp\(major)".utf8) + [0, 0, 0, 0]
            + compatible.flatMap { Array($0.utf8) } + Array("\0\0\0\u{8}free".utf8)
    }

    @Test(
        "MP4 audio brands are accepted, as major or compatible brand",
        arguments: ["M4A ", "mp42", "isom", "iso6", "dash"])
    func accepted(brand: String) {
        #expect(AudioSniffer.sniff(Self.ftyp(brand)) == .mp4Audio(majorBrand: brand))
        #expect(AudioSniffer.sniff(Self.ftyp("XYZW", ["abcd", brand])) == .mp4Audio(majorBrand: "XYZW"))
    }

    @Test(
        "anything else is refused, saying what it is",
        arguments: [
            ([UInt8](), "an empty file"), (Array("RIFF\u{24}\0\0\0WAVEfmt ".utf8), "a WAV file (RIFF/WAVE)"),
            (Array("hello, this is a text file".utf8), #"text (starting "hello, this is a text fi")"#),
            (Array("ID3\u{4}\0\0\0\0\0\0\0\0".utf8), "an MP3 file (ID3 tag)"),
            ([0xFF, 0xF1, 0x50, 0x80, 0, 0, 0, 0, 0, 0, 0, 0], "raw AAC (ADTS) without an MP4 container"),
            (Array("OggS\0\u{2}\0\0\0\0\0\0".utf8), "an Ogg file"),
            ([0, 0, 0], "only 3 bytes, too short for an M4A file"),
            (ftyp("qt  "), "an MP4-family file of brand 'qt  ', not M4A audio"),
            (
                [0, 0, 0, 9] + Array("ftypM4A ".utf8) + [0, 0, 0, 0],
                "an MP4 file whose ftyp box has an impossible size (9)"
            ),
            (
                [0xDE, 0xAD, 0xBE, 0xEF, 0, 1, 2, 3, 4, 5, 6, 7, 8],
                "unrecognised data starting de ad be ef 00 01 02 03"
            ),
        ])
    func refused(bytes: [UInt8], seen: String) {
        #expect(
            AudioSniffer.sniff(bytes) == .refused("Only AAC audio in an MP4/M4A file is accepted; this is \(seen)."))
    }

    @Test("keys: 32 hex digits from 16 injected bytes; received keys are validated")
    func keys() {
        let key = IdempotencyKey(randomBytes: [UInt8](0..<20))
        #expect(key.rawValue == "000102030405060708090a0b0c0d0e0f")
        #expect(IdempotencyKey(rawValue: key.rawValue) == key)
        #expect(IdempotencyKey(rawValue: "9f2a3c4d-1111-4222-8333-944455556666") != nil)
        for bad in ["", "short", String(repeating: "a", count: 129), "has spaces in it ....", "ünïcödé-ünïcödé-ü"] {
            #expect(IdempotencyKey(rawValue: bad) == nil, "\(bad)")
        }
    }

    @Test("same key + same length → the same memory; another length or digest → 422")
    func rule() {
        let key = IdempotencyKey(randomBytes: [UInt8](repeating: 3, count: 16))
        let record = IdempotencyRule.Record(key: key, length: 1_000, digest: [1, 2, 3], memoryId: "m-1")
        #expect(IdempotencyRule.decide(existing: nil, length: 1_000, digest: nil) == .new)
        #expect(IdempotencyRule.decide(existing: record, length: 1_000, digest: nil) == .repeatOf(record))
        #expect(IdempotencyRule.decide(existing: record, length: 1_000, digest: [1, 2, 3]) == .repeatOf(record))
        guard case .conflict(let message) = IdempotencyRule.decide(existing: record, length: 999, digest: nil) else {
            Issue.record("another length was accepted")
            return
        }
        #expect(message.contains("1000-byte upload") && message.contains("999 bytes"))
        guard case .conflict = IdempotencyRule.decide(existing: record, length: 1_000, digest: [9]) else {
            Issue.record("another digest was accepted")
            return
        }
    }
}
