import Foundation
import TestSupport
import Testing

@testable import ToukanRecorder

/// A fresh directory for one test's files.
func scratchDirectory(_ name: String) throws -> URL {
    try Subprocess.temporaryDirectory("toukan-recorder-\(name)")
}

/// Starts `recorder`, waits until it holds `seconds` of audio (a generous deadline: pacing is real time), stops it.
func record(_ recorder: ToukanRecorder, seconds: Double) async throws -> RecordingSummary {
    try await recorder.start()
    try await eventually("\(seconds) s of \(recorder.source) recorded", timeout: .seconds(60)) {
        recorder.elapsed >= .seconds(seconds)
    }
    return try await recorder.stop()
}

/// The types of the top-level boxes of an MP4 file, in order ("ftyp", "moov", "moof", "mdat", …).
func topLevelBoxes(_ file: URL) throws -> [String] {
    let data = try Data(contentsOf: file)
    var boxes: [String] = []
    var offset = 0
    while offset + 8 <= data.count {
        let size = data[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
        boxes.append(String(decoding: data[offset + 4..<offset + 8], as: UTF8.self))
        guard size >= 8 else { break }
        offset += size
    }
    return boxes
}

/// Whether the interop venv (PyAV) is there; says so loudly when a test must skip without it.
func pyAVAvailable(_ test: String) -> Bool {
    InteropPeers.pythonAvailable(for: test)
}

extension Duration {
    var seconds: Double { self / .seconds(1) }
}
