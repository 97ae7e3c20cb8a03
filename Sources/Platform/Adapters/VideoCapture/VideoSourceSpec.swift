public import Foundation

/// Where a video capture takes its pictures: the value of `--video-source`.
public enum VideoSourceSpec: Sendable, Hashable, CustomStringConvertible {
    /// A Video4Linux2 camera; nil for the default (`/dev/video0`).
    case camera(device: String?)
    /// A live moving test pattern (`videotestsrc pattern=ball` on a grey background).
    case test
    /// A video or picture file, played in a loop.
    case file(path: String)
    /// A network camera: `rtsp://` (or `rtsps://`) URL, received and decoded by GStreamer (`uridecodebin`:
    /// `rtspsrc` from gstreamer1.0-plugins-good, the decoders of gstreamer1.0-libav).
    case network(url: String)
    /// RGB frames of this size the application pushes (``VideoCapture/push(rgb:at:)``) at the configured rate: for
    /// tests and for video that comes from elsewhere.
    case pushed(width: Int, height: Int)

    /// The accepted forms, for help texts.
    public static let syntax = "v4l2[:DEVICE]|test|file:PATH|rtsp://…"

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
            } else if text.hasPrefix("rtsp://") || text.hasPrefix("rtsps://"), text.utf8.count <= 2048,
                let url = URL(string: text), url.host?.isEmpty == false
            {
                self = .network(url: text)
            } else {
                throw VideoCaptureError(
                    code: .invalidSource,
                    message: "unknown video source '\(Self.redacted(String(text.prefix(80))))': use v4l2, "
                        + "v4l2:/dev/videoN, test, file:PATH or rtsp://HOST[:PORT]/PATH (`v4l2-ctl --list-devices` "
                        + "lists cameras)")
            }
        }
    }

    public var description: String {
        switch self {
        case .camera(let device): device.map { "v4l2:\($0)" } ?? "v4l2"
        case .test: "test"
        case .file(let path): "file:\(path)"
        case .pushed(let width, let height): "pushed \(width)x\(height)"
        case .network(let url): Self.redacted(url)
        }
    }

    /// A URL with its password left out (`rtsp://user:***@host/…`): what logs, messages and databases may keep.
    public static func redacted(_ text: String) -> String {
        guard var parts = URLComponents(string: text), parts.password != nil else { return text }
        parts.password = "***"
        return parts.string ?? text
    }
}
