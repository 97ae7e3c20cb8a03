import Foundation
import ToukanCore

/// What the benchmark uploads: an `ftyp` box of brand `M4A ` (so the server accepts it as M4A audio) and a `free`
/// box of pseudo-random bytes up to the size asked. The server's processing is off in the benchmark, so only
/// the transfer and storage are measured; random bytes keep anything on the way from making it smaller.
enum UploadFixture {
    struct File {
        let url: URL
        let bytes: Int
    }

    static func write(bytes: Int, to url: URL) throws -> File {
        var header: [UInt8] = [0, 0, 0, 24] + Array("ftypM4A ".utf8) + [0, 0, 0, 0] + Array("M4A isom".utf8)
        let free = bytes - header.count
        header += [UInt8(free >> 24 & 0xFF), UInt8(free >> 16 & 0xFF), UInt8(free >> 8 & 0xFF), UInt8(free & 0xFF)]
        header += Array("free".utf8)
        guard FileManager.default.createFile(atPath: url.path, contents: Data(header)) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
        }
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        try handle.seekToEnd()
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var remaining = bytes - header.count
        while remaining > 0 {
            let count = min(remaining, 1 << 20)
            var chunk = [UInt8](repeating: 0, count: count)
            chunk.withUnsafeMutableBytes { raw in
                for index in stride(from: 0, to: count - 7, by: 8) {
                    // SplitMix64: fast, and good enough to defeat compression.
                    state &+= 0x9E37_79B9_7F4A_7C15
                    var mixed = state
                    mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
                    mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
                    raw.storeBytes(of: mixed ^ (mixed >> 31), toByteOffset: index, as: UInt64.self)
                }
            }
            try handle.write(contentsOf: chunk)
            remaining -= count
        }
        return File(url: url, bytes: bytes)
    }

    /// A fresh ledger row for `file`, with its own idempotency key (so every upload makes a new memory).
    static func recording(for file: URL) -> Recording {
        let key = IdempotencyKey(randomBytes: (0..<16).map { _ in UInt8.random(in: 0...255) })
        return Recording(
            id: UUID(), filePath: "recordings/" + file.lastPathComponent, recordedAt: Date(), duration: 0,
            idempotencyKey: key)
    }
}
