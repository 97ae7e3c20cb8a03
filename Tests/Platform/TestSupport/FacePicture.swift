public import Foundation
import Testing

/// A real face for the face-detection tests: NASA's public-domain portrait of Eileen Collins
/// (scikit-image's `astronaut.png`), fetched by `make venv` from the hash-pinned wheel into
/// `.venv/fixtures/astronaut.png` and never committed. Offered as the head alone, as RGB pixels of any square size.
public enum FacePicture {
    /// The picture could not be cut.
    public struct Unusable: Error, CustomStringConvertible {
        public var description: String
    }

    /// Where `make venv` puts the picture.
    public static let path = Fixtures.repositoryRoot.appendingPathComponent(".venv/fixtures/astronaut.png")

    /// The head cropped from the 512×512 portrait (160×160 around it), as `size`×`size` RGB pixels, made with
    /// GStreamer's gst-launch-1.0 (pngdec, videocrop, videoscale).
    /// - Returns: nil after a loud skip when the picture is missing (a recorded failure when the run requires
    ///   every peer, as `make test` and CI do: `make venv` fetches it).
    public static func head(size: Int, for test: String) async throws -> [UInt8]? {
        guard FileManager.default.fileExists(atPath: path.path) else {
            let what = "the face picture \(path.path) (run `make venv`)"
            if InteropPeers.required {
                Issue.record("\(test) needs \(what)")
            } else {
                FileHandle.standardError.write(Data("WARNING: SKIPPING \(test): \(what) is missing.\n".utf8))
            }
            return nil
        }
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("face-\(UUID().uuidString).rgb")
        defer { try? FileManager.default.removeItem(at: output) }
        let result = try await Subprocess.run(
            "gst-launch-1.0",
            [
                "-q", "filesrc", "location=\(path.path)", "!", "pngdec", "!", "videoconvert", "!", "videocrop",
                "left=143", "right=209", "top=32", "bottom=320", "!", "videoscale", "!",
                "video/x-raw,format=RGB,width=\(size),height=\(size)", "!", "filesink", "location=\(output.path)",
            ])
        guard result.status == 0 else {
            throw Unusable(description: "gst-launch-1.0 could not cut the face: \(result.stderrText)")
        }
        let pixels = [UInt8](try Data(contentsOf: output))
        guard pixels.count == size * size * 3 else {
            throw Unusable(description: "the face came out as \(pixels.count) bytes, not \(size * size * 3)")
        }
        return pixels
    }
}
