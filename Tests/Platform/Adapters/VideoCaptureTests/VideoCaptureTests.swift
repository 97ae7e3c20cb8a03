import Foundation
import GStreamer
import Synchronization
import TestSupport
import Testing
import VideoCapture

/// The video capture on real GStreamer pipelines: a live test pattern, frames pushed by the test (a grey room with
/// a real face in it, covered, turned), a camera that is not there.
@Suite(
    "VideoCapture: grey frames, faces and a picture from a live video", .serialized,
    .heavy(cores: 0.5, "GStreamer video and OpenCV face detection"))
struct VideoCaptureTests {
    /// Collects a capture's events.
    final class Events: Sendable {
        private let events = Mutex<[VideoCapture.Event]>([])

        init(_ capture: VideoCapture) {
            let stream = capture.events()
            Task { [self] in
                for await event in stream { events.withLock { $0.append(event) } }
            }
        }

        var all: [VideoCapture.Event] { events.withLock { $0 } }

        var frames: [VideoCapture.Frame] {
            all.compactMap { if case .frame(let frame) = $0 { return frame } else { return nil } }
        }

        var losses: [String] {
            all.compactMap { if case .lost(let reason) = $0 { return reason } else { return nil } }
        }
    }

    @Test("a live test pattern: 160-pixel grey frames about 5 a second, no face in a ball, a JPEG picture")
    func testPattern() async throws {
        let capture = try VideoCapture(source: .test)
        let events = Events(capture)
        capture.start()
        defer { capture.stop() }
        try await eventually("ten frames", timeout: .seconds(30)) { events.frames.count >= 10 }
        let frames = events.frames
        let first = try #require(frames.first)
        #expect(first.width == 160 && first.height == 120 && first.pixels.count == 160 * 120)
        // About 5 a second: the typical spacing is 200 ms; a machine loaded by other work may drop a late frame
        // (the capture keeps up rather than queueing), so single gaps may be longer, and `videorate` may then take
        // the test pattern's next frame (15 a second) early: 133 ms.
        let spacing = zip(frames, frames.dropFirst()).map { $1.timestamp - $0.timestamp }.sorted()
        let median = spacing[spacing.count / 2]
        #expect(median >= .milliseconds(150) && median <= .milliseconds(250), "\(spacing)")
        #expect(spacing.allSatisfy { $0 >= .milliseconds(100) && $0 <= .milliseconds(1000) }, "\(spacing)")
        if capture.detectsFaces { #expect(frames.allSatisfy { $0.faces == [] }, "a ball is not a face") }
        let picture = try #require(capture.latestPicture)
        #expect(picture.jpeg.starts(with: [0xFF, 0xD8]) && picture.jpeg.count < 50_000, "\(picture.jpeg.count) bytes")
        #expect(picture.width == 320 && picture.height == 240)
        #expect(events.losses.isEmpty)
    }

    /// A 320×240 grey room with the 120×120 head at (100, 60), optionally covered by a grey patch or turned 90°.
    static func room(head: [UInt8], covered: Bool = false, turned: Bool = false) -> [UInt8] {
        var pixels = [UInt8](repeating: 128, count: 320 * 240 * 3)
        for y in 0..<120 {
            for x in 0..<120 {
                // Turned: the head rotated a quarter turn clockwise.
                let (sourceX, sourceY) = turned ? (y, 119 - x) : (x, y)
                for channel in 0..<3 {
                    pixels[((60 + y) * 320 + 100 + x) * 3 + channel] = head[(sourceY * 120 + sourceX) * 3 + channel]
                }
            }
        }
        if covered {
            for y in 75..<165 {
                for x in 115..<205 {
                    for channel in 0..<3 { pixels[(y * 320 + x) * 3 + channel] = 128 }
                }
            }
        }
        return pixels
    }

    @Test("a real face is found where it is; covered or turned a quarter, it is not")
    func faces() async throws {
        guard let head = try await FacePicture.head(size: 120, for: "the face detection test") else { return }
        let capture = try VideoCapture(source: .pushed(width: 320, height: 240))
        try #require(capture.detectsFaces, "facedetect (gstreamer1.0-opencv) and opencv-data must be installed")
        let events = Events(capture)
        capture.start()
        defer { capture.stop() }
        let scenes = [Self.room(head: head), Self.room(head: head, covered: true), Self.room(head: head, turned: true)]
        try await eventually("the pipeline to play", timeout: .seconds(30)) { events.all.contains(.started) }
        // One frame at a time: pushed all at once, a loaded machine's capture (which drops late frames rather
        // than queue them) lost some, and the 15 never came.
        for index in 0..<15 {
            capture.push(rgb: scenes[index / 5], at: .milliseconds(200 * index))
            try await eventually("frame \(index + 1)", timeout: .seconds(30)) { events.frames.count > index }
        }
        let frames = events.frames.sorted { $0.timestamp < $1.timestamp }
        let visible = frames.prefix(5).map { $0.faces ?? [] }
        #expect(visible.allSatisfy { $0.count == 1 }, "\(visible)")
        if let face = visible.first?.first {
            // facedetect finds it at x=124, y=84, 76×76 in the 320×240 frame.
            #expect(abs(face.x - 124.0 / 320) < 0.03 && abs(face.y - 84.0 / 240) < 0.04, "\(face)")
            #expect(abs(face.width - 76.0 / 320) < 0.04, "\(face)")
        }
        #expect(frames[5..<10].allSatisfy { $0.faces == [] }, "covered: \(frames[5..<10].map(\.faces))")
        #expect(frames[10..<15].allSatisfy { $0.faces == [] }, "turned: \(frames[10..<15].map(\.faces))")
    }

    @Test("a camera that is not there is reported at once, with what to do, and tried again")
    func missingCamera() async throws {
        var configuration = VideoCapture.Configuration()
        configuration.retryInterval = .milliseconds(300)
        let capture = try VideoCapture(source: .camera(device: "/dev/video-none"), configuration: configuration)
        let events = Events(capture)
        capture.start()
        try await eventually("two reports", timeout: .seconds(30)) { events.losses.count >= 2 }
        capture.stop()
        let reason = try #require(events.losses.first)
        #expect(reason.contains("camera /dev/video-none is not available"), "\(reason)")
        #expect(reason.contains("v4l2-ctl --list-devices"))
        #expect(events.frames.isEmpty)
    }

    @Test("disconnected on purpose: lost, no frames and no retry until reconnected, then frames again")
    func disconnectAndReconnect() async throws {
        var configuration = VideoCapture.Configuration()
        configuration.retryInterval = .milliseconds(200)
        let capture = try VideoCapture(source: .test, configuration: configuration)
        let events = Events(capture)
        capture.start()
        defer { capture.stop() }
        try await eventually("frames", timeout: .seconds(30)) { events.frames.count >= 3 }
        capture.disconnect(reason: "camera disconnected")
        try await eventually("the loss", timeout: .seconds(10)) { events.losses == ["camera disconnected"] }
        let held = events.frames.count
        try await Task.sleep(for: .seconds(1))
        #expect(events.frames.count == held, "no frame while disconnected, and no retry")
        #expect(events.losses.count == 1)
        capture.reconnect()
        try await eventually("frames again", timeout: .seconds(30)) { events.frames.count >= held + 3 }
        #expect(events.losses.count == 1)
    }

    /// What an `intervideosrc` on a channel shows: the size and mean level of each frame, in grey.
    final class ChannelWatcher: Sendable {
        struct Seen: Sendable {
            var width: Int
            var height: Int
            var meanLevel: Double
        }

        private let pipeline: Pipeline
        private let seen = Mutex<[Seen]>([])

        init(channel: String) throws {
            pipeline = try Pipeline(name: "test-channel-watcher")
            let source = try pipeline.make("intervideosrc", name: "source")
            source.set("channel", channel)
            let convert = try pipeline.make("videoconvert", name: "convert")
            let sink = try pipeline.make("appsink", name: "sink")
            try pipeline.link([source, convert, sink])
            sink.configureAppSink(caps: "video/x-raw,format=GRAY8", sync: false) { [weak self] sample in
                if let pixels = sample.bytes(), let size = sample.videoSize, !pixels.isEmpty {
                    let mean = Double(pixels.reduce(0) { $0 + Int($1) }) / Double(pixels.count)
                    self?.seen.withLock { $0.append(Seen(width: size.width, height: size.height, meanLevel: mean)) }
                }
                return .ok
            }
            guard pipeline.setState(.playing) else { throw PipelineRefused() }
        }

        struct PipelineRefused: Error {}

        /// The frames seen from now on.
        func mark() -> Int { seen.withLock { $0.count } }

        func frames(since mark: Int) -> [Seen] { seen.withLock { Array($0.dropFirst(mark)) } }

        func stop() { pipeline.tearDown() }
    }

    @Test("the live feed: a stream in the process sees the camera at full size only while it watches; black after")
    func liveFeed() async throws {
        let capture = try VideoCapture(source: .test)
        let events = Events(capture)
        capture.start()
        defer { capture.stop() }
        let feed = capture.liveFeed
        let watcher = try ChannelWatcher(channel: feed.channel)
        defer { watcher.stop() }
        try await eventually("the capture's first frames", timeout: .seconds(30)) { events.frames.count >= 2 }

        // Nobody watches: the valve is shut, the channel shows only black (I420 black is level 16).
        var mark = watcher.mark()
        try await eventually("frames on the channel", timeout: .seconds(30)) { watcher.frames(since: mark).count >= 5 }
        #expect(watcher.frames(since: mark).allSatisfy { $0.meanLevel < 30 }, "\(watcher.frames(since: mark))")
        #expect(feed.viewerCount == 0)

        // Watching: the test pattern (a ball on grey) at its full 320×240, while the analysis goes on.
        let viewer = feed.watch()
        #expect(feed.viewerCount == 1)
        try await eventually("the picture on the channel", timeout: .seconds(30)) {
            watcher.frames(since: watcher.mark() - 1).last.map { $0.width == 320 && $0.meanLevel > 80 } == true
        }
        let analysed = events.frames.count
        mark = watcher.mark()
        try await eventually("more of both", timeout: .seconds(30)) {
            watcher.frames(since: mark).count >= 10 && events.frames.count >= analysed + 3
        }
        #expect(watcher.frames(since: mark).allSatisfy { $0.width == 320 && $0.height == 240 })
        #expect(events.frames.last.map { $0.width == 160 && $0.height == 120 } == true)

        // The last viewer gone: the valve shuts, and the channel turns black (never a frozen picture).
        viewer.cancel()
        viewer.cancel()
        #expect(feed.viewerCount == 0)
        try await eventually("black on the channel again", timeout: .seconds(30)) {
            watcher.frames(since: watcher.mark() - 1).last.map { $0.meanLevel < 30 } == true
        }
        #expect(events.losses.isEmpty)
    }

    @Test("--video-source forms, and the refusal of an unknown one")
    func parsing() throws {
        #expect(try VideoSourceSpec(parsing: "v4l2") == .camera(device: nil))
        #expect(try VideoSourceSpec(parsing: "v4l2:/dev/video2") == .camera(device: "/dev/video2"))
        #expect(try VideoSourceSpec(parsing: "test") == .test)
        #expect(try VideoSourceSpec(parsing: "file:/tmp/cot.mp4") == .file(path: "/tmp/cot.mp4"))
        #expect(try VideoSourceSpec(parsing: "rtsp://10.0.0.5/live") == .network(url: "rtsp://10.0.0.5/live"))
        #expect {
            try VideoSourceSpec(parsing: "webcam")
        } throws: { error in
            (error as? VideoCaptureError)?.message.contains("use v4l2, v4l2:/dev/videoN, test, file:PATH or rtsp://")
                == true
        }
        // a password in a refused address is not repeated either
        #expect {
            try VideoSourceSpec(parsing: "rtsp://admin:hunter2@")
        } throws: { error in
            (error as? VideoCaptureError)?.message.contains("hunter2") == false
        }
    }
}
