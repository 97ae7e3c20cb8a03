public import Foundation
import TestSupport

/// What FFmpeg (PyAV, `Tests/Interop/media/mkv_probe.py`) reads in a recording: an implementation independent of
/// the GStreamer that wrote it.
public struct RecordingProbe: Sendable {
    /// The codec of each stream, e.g. `["aac"]`.
    public var codecs: [String]
    /// The decoded audio: its length, format, the RMS of its last second, and the zero-crossing frequency of the
    /// second in its middle (away from the encoder's priming and padding).
    public var seconds: Double
    public var sampleRate: Int
    public var channels: Int
    /// The codec profile, e.g. "LC".
    public var profile: String?
    public var rms: Double
    public var frequency: Double

    /// Why FFmpeg could not read the file.
    public struct Unreadable: Error, CustomStringConvertible {
        public var description: String
    }

    /// Reads `file` with the interop venv's Python.
    ///
    /// - Throws: ``Unreadable`` with FFmpeg's error or the script's output, or without a venv.
    public static func read(_ file: URL) async throws -> RecordingProbe {
        guard let python = InteropPeers.python else {
            throw Unreadable(description: "the Python interop venv (PyAV) is missing: run `make venv`")
        }
        let script = Fixtures.repositoryRoot.appendingPathComponent("Tests/Interop/media/mkv_probe.py").path
        let result = try await Subprocess.run(python, [script, file.path])
        guard result.status == 0,
            let object = try? JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any]
        else {
            throw Unreadable(description: "mkv_probe.py failed (\(result.status)): \(result.stderrText)")
        }
        if let error = object["error"] { throw Unreadable(description: "FFmpeg cannot read \(file.path): \(error)") }
        guard let audio = object["audio"] as? [String: Any] else {
            throw Unreadable(description: "FFmpeg found no audio in \(file.path): \(result.stdoutText)")
        }
        let streams = object["streams"] as? [[String: Any]] ?? []
        return RecordingProbe(
            codecs: streams.compactMap { $0["codec"] as? String },
            seconds: audio["seconds"] as? Double ?? 0,
            sampleRate: audio["sample_rate"] as? Int ?? 0,
            channels: audio["channels"] as? Int ?? 0,
            profile: audio["profile"] as? String,
            rms: audio["rms"] as? Double ?? 0,
            frequency: audio["middle_frequency"] as? Double ?? 0
        )
    }
}
