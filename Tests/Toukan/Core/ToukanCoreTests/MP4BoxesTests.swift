import Testing
import ToukanCore

/// MP4's top level as the server checks it before decoding: boxes from the first byte to the last.
@Suite("MP4 boxes: a file is MP4 to its last byte, or damaged from a known byte on")
struct MP4BoxesTests {
    /// A box of `type` with `payload` bytes.
    static func box(_ type: String, _ payload: Int, size: UInt32? = nil) -> [UInt8] {
        let length = size ?? UInt32(8 + payload)
        return [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
            + Array(type.utf8) + [UInt8](repeating: 0x5A, count: payload)
    }

    static func walk(_ bytes: [UInt8]) -> MP4Boxes.Structure {
        MP4Boxes.walk(size: Int64(bytes.count)) { Array(bytes[Int($0)..<min(bytes.count, Int($0) + 16)]) }
    }

    @Test("a recording's boxes (ftyp, moov, fragments) make the whole file; a last mdat of length 0 runs to the end")
    func whole() {
        let file = Self.box("ftyp", 24) + Self.box("moov", 700) + Self.box("moof", 328) + Self.box("mdat", 4000)
        #expect(Self.walk(file) == .whole(types: ["ftyp", "moov", "moof", "mdat"]))
        let open = Self.box("ftyp", 24) + Self.box("mdat", 5000, size: 0)
        #expect(Self.walk(open) == .whole(types: ["ftyp", "mdat"]))
        let large: [UInt8] =
            [0, 0, 0, 1] + Array("mdat".utf8) + [0, 0, 0, 0, 0, 0, 0, 40] + [UInt8](repeating: 1, count: 24)
        #expect(Self.walk(Self.box("ftyp", 8) + large) == .whole(types: ["ftyp", "mdat"]))
        // QuickTime's metadata types start with © (0xA9, one byte).
        let copyright: [UInt8] = [0, 0, 0, 12, 0xA9] + Array("nam".utf8) + [1, 2, 3, 4]
        #expect(Self.walk(Self.box("ftyp", 8) + copyright) == .whole(types: ["ftyp", "©nam"]))
    }

    @Test("good audio, then garbage: damaged from where the garbage starts, saying why")
    func garbageAfterAFragment() {
        let good = Self.box("ftyp", 24) + Self.box("moov", 700) + Self.box("moof", 328) + Self.box("mdat", 4000)
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<50 {
            let garbage = (0..<200_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
            guard case .damaged(let valid, let reason) = Self.walk(good + garbage) else {
                Issue.record("random bytes after the boxes passed as MP4")
                continue
            }
            #expect(valid >= Int64(good.count) && valid < Int64(good.count + garbage.count), "\(reason)")
        }
    }

    /// What follows a good `ftyp` box in each bad file, and what the walk must say of it.
    static let badTails: [([UInt8], String)] = {
        let badType: [UInt8] = [0, 0, 0, 16, 0xFF, 0x00, 0x13, 0x37, 0, 0, 0, 0, 0, 0, 0, 0]
        let cutLength: [UInt8] = [0, 0, 0, 1] + Array("mdat".utf8) + [0, 0]
        return [
            ([0x00, 0x01], "2 bytes left, too few for a box"),
            (box("mdat", 10, size: 9_000), "the 'mdat' box claims 9000 bytes but only 18 are left"),
            (box("free", 0, size: 4), "the 'free' box claims 4 bytes"),
            (badType, "no box type"),
            (cutLength, "64-bit length is cut off"),
        ]
    }()

    @Test("every way a top-level box can be wrong", arguments: badTails)
    func refusals(tail: [UInt8], reason: String) {
        let file = Self.box("ftyp", 24) + tail
        guard case .damaged(let valid, let said) = Self.walk(file) else {
            Issue.record("taken for a whole file")
            return
        }
        #expect(valid == 32 && said.contains(reason), "\(said)")
    }
}
