public import Foundation
import TestSupport

/// M4A files made at test time with GStreamer (`gst-launch-1.0`, avenc_aac from gstreamer1.0-libav) and speech
/// from espeak-ng; nothing binary is committed. Made once per test process, in a temporary directory.
public enum AudioFixtures {
    public static let directory: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "toukan-fixtures-\(ProcessInfo.processInfo.processIdentifier)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }()

    /// The sentences whose transcripts the word error rate in docs/toukan.md was measured on.
    public static let sentences = [
        "please call me back tomorrow morning about the meeting",
        "the budget review is moved to friday afternoon",
        "we need three more people for the project",
        "send the report to the whole team before noon",
    ]

    /// A sine at `frequency` and `volume` (linear, 1 = 0 dBFS), mono 44.1 kHz AAC in MP4; `fragmented` as the
    /// recorder writes it (a fragment every 500 ms).
    public static func tone(
        seconds: Double, volume: Double = 0.5, frequency: Int = 997, fragmented: Bool = false, name: String
    ) async throws -> URL {
        let url = directory.appendingPathComponent("\(name).m4a")
        if FileManager.default.fileExists(atPath: url.path) { return url }
        let buffers = Int(seconds * 44_100 / 1024)
        // Written aside and renamed: tests running at once must never read a half-written fixture.
        let partial = directory.appendingPathComponent("\(name)-\(UUID().uuidString).m4a")
        try await launch(
            [
                "audiotestsrc", "num-buffers=\(buffers)", "samplesperbuffer=1024", "wave=sine", "freq=\(frequency)",
                "volume=\(volume)", "!", "audio/x-raw,rate=44100,channels=1", "!", "audioconvert", "!", "avenc_aac",
                "bitrate=64000", "!", "mp4mux",
            ] + (fragmented ? ["fragment-duration=500"] : []) + [
                "!", "filesink", "location=\(partial.path)",
            ])
        try? FileManager.default.moveItem(at: partial, to: url)
        try? FileManager.default.removeItem(at: partial)
        return url
    }

    /// espeak-ng saying `text` (WAV), and the same as M4A; the WAV's duration in seconds.
    public static func speech(_ text: String, name: String) async throws -> (wav: URL, m4a: URL, duration: Double) {
        let wav = directory.appendingPathComponent("\(name).wav")
        let m4a = directory.appendingPathComponent("\(name).m4a")
        if !FileManager.default.fileExists(atPath: m4a.path) {
            let partialWAV = directory.appendingPathComponent("\(name)-\(UUID().uuidString).wav")
            let partial = directory.appendingPathComponent("\(name)-\(UUID().uuidString).m4a")
            let result = try await Subprocess.run(
                "espeak-ng", ["-v", "en-us+f3", "-s", "120", "-w", partialWAV.path, text])
            guard result.status == 0 else { throw AudioFixtureFailure("espeak-ng failed: \(result.stderrText)") }
            try await launch([
                "filesrc", "location=\(partialWAV.path)", "!", "decodebin", "!", "audioconvert", "!", "audioresample",
                "!",
                "audio/x-raw,rate=44100,channels=1", "!", "avenc_aac", "bitrate=64000", "!", "mp4mux", "!", "filesink",
                "location=\(partial.path)",
            ])
            // The WAV first: whoever sees the M4A also finds the WAV.
            try? FileManager.default.moveItem(at: partialWAV, to: wav)
            try? FileManager.default.moveItem(at: partial, to: m4a)
            try? FileManager.default.removeItem(at: partialWAV)
            try? FileManager.default.removeItem(at: partial)
        }
        return (wav, m4a, try wavDuration(wav))
    }

    /// A WAV's duration from its header (espeak-ng writes 16-bit mono PCM with a 44-byte header).
    public static func wavDuration(_ url: URL) throws -> Double {
        let bytes = [UInt8](try Data(contentsOf: url))
        func u32(_ at: Int) -> Int { (0..<4).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) } }
        let byteRate = u32(28)
        return Double(bytes.count - 44) / Double(byteRate)
    }

    private static func launch(_ arguments: [String]) async throws {
        let result = try await Subprocess.run("gst-launch-1.0", ["-q"] + arguments)
        guard result.status == 0 else {
            throw AudioFixtureFailure(
                "gst-launch-1.0 failed (is gstreamer1.0-libav installed? `make test` installs it): \(result.stderrText)"
            )
        }
    }
}

/// A fixture that could not be made, and why.
struct AudioFixtureFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
