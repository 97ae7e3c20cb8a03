/// Where a video capture takes its pictures: the value of `--video-source`.
public enum VideoSourceSpec: Sendable, Hashable, CustomStringConvertible {
    /// A Video4Linux2 camera; nil for the default (`/dev/video0`).
    case camera(device: String?)
    /// A live moving test pattern (`videotestsrc pattern=ball` on a grey background).
    case test
    /// A video or picture file, played in a loop.
    case file(path: String)
    /// RGB frames of this size the application pushes (``VideoCapture/push(rgb:at:)``) at the configured rate: for
    /// tests and for video that comes from elsewhere.
    case pushed(width: Int, height: Int)

    /// The accepted forms, for help texts.
    public static let syntax = "v4l2[:DEVICE]|test|file:PATH"

    /// Parses `v4l2`, `v4l2:/dev/video1`, `test` or `file:PATH`.
    /// - Throws: ``VideoCaptureError`` (`.invalidSource`) saying what is accepted.
    public init(parsing text: String) throws(VideoCaptureError) {
        switch text {
        case "v4l2": self = .camera(device: nil)
        case "test": self = .test
        default:
            if text.hasPrefix("v4l2:"), text.count > 5 {
                self = .camera(device: String(text.dropFirst(5)))
            } else if text.hasPrefix("file:"), text.count > 5 {
                self = .file(path: String(text.dropFirst(5)))
            } else {
                throw VideoCaptureError(
                    code: .invalidSource,
                    message: "unknown video source '\(text.prefix(80))': use v4l2, v4l2:/dev/videoN, test or "
                        + "file:PATH (`v4l2-ctl --list-devices` lists cameras)")
            }
        }
    }

    public var description: String {
        switch self {
        case .camera(let device): device.map { "v4l2:\($0)" } ?? "v4l2"
        case .test: "test"
        case .file(let path): "file:\(path)"
        case .pushed(let width, let height): "pushed \(width)x\(height)"
        }
    }
}
