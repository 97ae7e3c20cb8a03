public import Foundation
import GStreamer
import Synchronization

/// A camera (or a test pattern, a file, pushed frames) captured continuously at a low rate for analysis: small
/// grey frames (160 pixels wide, 5 a second by default), the faces OpenCV's Haar cascade finds in each (through
/// GStreamer's `facedetect`, gstreamer1.0-opencv), and the latest frame as a small JPEG. Nothing is written to disk.
/// Live streams in the same process watch the same camera at full rate through ``liveFeed``.
///
/// When the camera goes away (unplugged, its pipeline fails, the video ends) ``events()`` says so at once with the
/// reason, and the capture tries again every ``Configuration/retryInterval`` until it is stopped.
///
/// ```swift
/// let capture = try VideoCapture(source: .camera(device: nil))
/// let events = capture.events()
/// capture.start()
/// for await event in events { … }   // .frame(Frame) with .faces, .lost(reason)
/// ```
public final class VideoCapture: Sendable {
    public struct Configuration: Sendable, Hashable {
        /// Width of the frames faces are looked for in (the height follows the picture's shape).
        public var width = 320
        /// Width of the grey frames delivered.
        public var grayWidth = 160
        public var framesPerSecond = 5
        /// The Haar cascade for faces; nil: no face detection.
        public var faceProfile: String? = Self.defaultFaceProfile
        /// JPEG quality of the kept picture (0…100).
        public var pictureQuality = 70
        public var retryInterval: Duration = .seconds(2)
        /// The largest size a camera is opened at (it offers its largest up to this).
        public var cameraMaximum = CameraSize(width: 1280, height: 720)

        public struct CameraSize: Sendable, Hashable {
            public var width: Int
            public var height: Int

            public init(width: Int, height: Int) {
                self.width = width
                self.height = height
            }
        }

        /// The Haar cascade for faces seen from the side, run on the frame and on its mirror image (the cascade
        /// knows one side); nil or a missing file: none.
        public var sideFaceProfile: String? = Self.defaultSideFaceProfile
        /// The angle (radians) of the two extra passes of the frontal cascade on the frame turned left and right:
        /// a head lying askew in the cot (the cascade alone finds faces within about 15° of upright); 0: none.
        public var tiltAngle = 0.61

        /// Debian's frontal-face cascade (opencv-data).
        public static let defaultFaceProfile = "/usr/share/opencv4/haarcascades/haarcascade_frontalface_default.xml"
        /// Debian's profile-face cascade (opencv-data).
        public static let defaultSideFaceProfile = "/usr/share/opencv4/haarcascades/haarcascade_profileface.xml"

        public init() {}
    }

    /// A face found in a frame, as fractions of the frame.
    public struct Face: Sendable, Hashable {
        public var x: Double
        public var y: Double
        public var width: Double
        public var height: Double
        /// How it was seen: `frontal`, `tilted` (the frontal cascade on the turned frame) or `side` (the profile
        /// cascade).
        public var view: String

        public init(x: Double, y: Double, width: Double, height: Double, view: String = "frontal") {
            self.x = x
            self.y = y
            self.width = width
            self.height = height
            self.view = view
        }

        /// In the face detector's pixels, normalised later by the frame it was found in.
        init(pixelX x: Int, y: Int, width: Int, height: Int, view: String = "frontal") {
            self.init(x: Double(x), y: Double(y), width: Double(width), height: Double(height), view: view)
        }
    }

    /// One grey frame.
    public struct Frame: Sendable, Hashable {
        public var width: Int
        public var height: Int
        /// GRAY8, row after row.
        public var pixels: [UInt8]
        /// Its place on the capture's timeline (starts again after a reconnection).
        public var timestamp: Duration
        public var capturedAt: ContinuousClock.Instant
        /// The faces found in it; nil when faces are not looked for.
        public var faces: [Face]?
    }

    /// A picture of the latest frame, for evidence.
    public struct Picture: Sendable, Hashable {
        public var width: Int
        public var height: Int
        public var jpeg: [UInt8]
    }

    public enum Event: Sendable, Hashable {
        /// The video pipeline plays (again, after a loss): frames follow, pushed frames are taken.
        case started
        case frame(Frame)
        /// The video stopped, and why; the capture is trying again.
        case lost(String)
    }

    public let source: VideoSourceSpec
    public let configuration: Configuration
    /// Whether faces are looked for (a profile is set, the cascade file exists and `facedetect` is installed).
    public let detectsFaces: Bool
    /// The video at full size and rate for live streams in this process (the camera is opened only here).
    public let liveFeed = LiveVideoFeed()
    private let continuation: AsyncStream<Event>.Continuation
    private let stream: Mutex<AsyncStream<Event>?>
    private let shared = Mutex(Shared())

    private struct Shared {
        var running: VideoCapturePipeline?
        var stopped = false
        var started = false
        var picture: Picture?
        /// Why the camera is held disconnected (``disconnect(reason:)``); nil while it may run.
        var held: String?
        /// ``reconnect()`` was asked for: retry at once.
        var retryNow = false
    }

    /// - Throws: ``VideoCaptureError`` (`.missingPlugin`) when GStreamer's video elements are not installed.
    public init(source: VideoSourceSpec, configuration: Configuration = Configuration()) throws(VideoCaptureError) {
        self.source = source
        self.configuration = configuration
        do {
            try GStreamer.requireElements(VideoCapturePipeline.requiredElements(for: source, faces: false))
        } catch {
            throw VideoCaptureError(code: .missingPlugin, message: error.message)
        }
        let profile = configuration.faceProfile
        detectsFaces =
            profile.map { FileManager.default.fileExists(atPath: $0) } == true
            && (try? GStreamer.requireElements(["facedetect"])) != nil
        if detectsFaces, ProcessInfo.processInfo.environment["OPENCV_LOG_LEVEL"] == nil {
            // facedetect also loads nose/mouth/eye cascades Debian does not ship; OpenCV would print an error line
            // for each on every start. Set before any OpenCV thread runs.
            setenv("OPENCV_LOG_LEVEL", "SILENT", 0)
        }
        let (events, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingNewest(16))
        self.continuation = continuation
        stream = Mutex(events)
    }

    /// The capture's events (one consumer: the first call takes them).
    public func events() -> AsyncStream<Event> {
        stream.withLock { stream in
            defer { stream = nil }
            return stream ?? AsyncStream { $0.finish() }
        }
    }

    /// Starts capturing on a thread of its own (idempotent).
    public func start() {
        let first = shared.withLock { shared in
            defer { shared.started = true }
            return !shared.started && !shared.stopped
        }
        guard first else { return }
        let thread = Thread { [self] in runUntilStopped() }
        thread.name = "homeapps.video-capture"
        thread.start()
    }

    /// Stops capturing; the events end.
    public func stop() {
        let running = shared.withLock { shared in
            shared.stopped = true
            return shared.running
        }
        running?.requestStop()
        if running == nil { continuation.finish() }
    }

    /// Lets go of the camera as if it were unplugged (for trying things out, like a debug trigger): `.lost(reason)`,
    /// and no retry until ``reconnect()``.
    public func disconnect(reason: String = "camera disconnected") {
        let running = shared.withLock { shared in
            shared.held = reason
            return shared.running
        }
        running?.requestStop()
    }

    /// Tries the camera again now: after ``disconnect(reason:)``, or to skip the wait before the next retry after a
    /// loss.
    public func reconnect() {
        shared.withLock { shared in
            shared.held = nil
            shared.retryNow = true
        }
    }

    /// The latest frame as a JPEG; nil before the first.
    public var latestPicture: Picture? { shared.withLock { $0.picture } }

    /// Pushes one RGB frame (`width × height × 3` bytes) into a `.pushed` capture at `time` on its timeline.
    public func push(rgb: [UInt8], at time: Duration) {
        shared.withLock { $0.running }?.push(rgb: rgb, at: time)
    }

    // MARK: - The capture thread

    private func runUntilStopped() {
        defer { continuation.finish() }
        while !shared.withLock({ $0.stopped }) {
            if let held = shared.withLock({ $0.held }) {
                // Disconnected on purpose: lost until reconnected (or stopped).
                continuation.yield(.lost(held))
                while shared.withLock({ $0.held != nil && !$0.stopped }) { Thread.sleep(forTimeInterval: 0.05) }
                continue
            }
            let run: VideoCapturePipeline
            do {
                run = try VideoCapturePipeline(
                    source: source, configuration: configuration, liveFeed: liveFeed, detectsFaces: detectsFaces,
                    onFrame: { [continuation, configuration] frame in
                        continuation.yield(.frame(Self.normalised(frame, configuration: configuration)))
                    },
                    onPicture: { [self] picture in shared.withLock { $0.picture = picture } },
                    onPlaying: { [continuation] in continuation.yield(.started) })
            } catch {
                continuation.yield(.lost(error.message))
                return
            }
            let stopNow = shared.withLock { shared in
                shared.running = run
                return shared.stopped
            }
            if stopNow { run.requestStop() }
            let failure = run.run()
            let held = shared.withLock { shared in
                shared.running = nil
                shared.retryNow = false
                return shared.held
            }
            if shared.withLock({ $0.stopped }) { return }
            if held != nil { continue }
            guard let failure else { return }
            continuation.yield(.lost(failure.message))
            if failure.code == .missingPlugin { return }
            // Wait for the retry, waking early if stopped or asked to reconnect.
            let deadline = ContinuousClock.now + configuration.retryInterval
            while ContinuousClock.now < deadline, !shared.withLock({ $0.stopped || $0.retryNow }) {
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
    }

    /// The faces as fractions of the frame they were found in (the face detector's frame has the grey frame's
    /// shape at ``Configuration/width``).
    static func normalised(_ frame: Frame, configuration: Configuration) -> Frame {
        guard let faces = frame.faces else { return frame }
        let width = Double(configuration.width)
        let height = width * Double(frame.height) / Double(frame.width)
        var normalised = frame
        normalised.faces = faces.map {
            Face(x: $0.x / width, y: $0.y / height, width: $0.width / width, height: $0.height / height, view: $0.view)
        }
        return normalised
    }
}
