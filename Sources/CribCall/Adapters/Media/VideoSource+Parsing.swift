import Foundation

extension GStreamerMediaEngine.VideoSource {
    /// The `--video-source` syntax, for help texts.
    public static let syntax = "auto|v4l2[:DEVICE]|test"

    /// Parses `--video-source`: `auto` is nil (the camera, or the test pattern when the audio is a `test:` signal);
    /// `v4l2` the default camera, `v4l2:/dev/videoN` a given one; `test` a moving test pattern.
    ///
    /// - Throws: ``MediaError`` with code ``MediaError/Code/invalidConfiguration`` saying what is accepted.
    public static func parse(_ text: String) throws(MediaError) -> Self? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        switch trimmed {
        case "auto": return nil
        case "test": return .test
        case "v4l2": return .v4l2(device: nil)
        default:
            if trimmed.hasPrefix("v4l2:"), trimmed.count > 5 {
                return .v4l2(device: String(trimmed.dropFirst(5)))
            }
            throw MediaError(
                code: .invalidConfiguration,
                message: "unknown video source '\(text)': use \(syntax) (e.g. v4l2:/dev/video1; "
                    + "`v4l2-ctl --list-devices` lists cameras)"
            )
        }
    }
}
