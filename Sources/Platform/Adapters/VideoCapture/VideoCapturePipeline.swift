import Foundation
import GStreamer
import Synchronization

/// One run of a video capture pipeline:
///
/// `<source> ! tee name=raw`, then
/// `raw. ! queue ! videorate ! videoconvert ! videoscale ! video/x-raw,width=W,pixel-aspect-ratio=1/1,framerate=F/1
///  ! videoconvert ! video/x-raw,format=RGB [! facedetect] ! tee name=split` (the analysis: the rate drops first, so
/// the dropped frames cost nothing),
/// `split. ! queue ! videoconvert ! videoscale ! video/x-raw,format=GRAY8,width=G ! appsink` (the frames),
/// `split. ! queue ! videoconvert ! jpegenc ! appsink` (the latest picture, kept as evidence) and
/// `raw. ! valve ! queue ! intervideosink channel=…` (the full-rate ``LiveVideoFeed``, open only while watched),
/// where `<source>` is `v4l2src ! video/x-raw,width≤1280,height≤720`, `videotestsrc ! video/x-raw,320×240,15 fps`,
/// `filesrc ! decodebin` or `appsrc`. Elements are made and set through properties: no user text is parsed as
/// pipeline syntax.
///
/// Faces: `facedetect` posts one element message per frame (`faces`, in its frame's pixels, with the frame's
/// timestamp) before the frame goes on. Besides the frontal cascade in the chain, branches of `split` run more passes
/// (``FacePass``): the frontal cascade on the frame turned left and right (`rotate`), and the profile cascade on the
/// frame and its mirror image (`videoflip`), each ending in a `fakesink`; their faces are turned back into the
/// frame's pixels. The messages are read on the run thread and the frame reaches the appsink on a streaming thread,
/// in any order; a frame waits (at most a few) until every pass's message has been read, so every frame carries the
/// faces found in it, one box per face.
///
/// Threads: like AudioCapture's pipeline — built on the caller's thread, driven (states, bus, teardown) by the run
/// thread, callbacks on streaming threads touching only the `Mutex`ed state and the thread-safe continuation.
final class VideoCapturePipeline: Sendable {
    private static let stopMessageName = "homeapps-video-capture-stop"
    /// Frames kept waiting for their faces before they go without.
    private static let maximumParkedFrames = 8

    /// One run of a face cascade over the analysis frames.
    struct FacePass: Sendable, Hashable {
        /// The `facedetect` element's name (its messages' source).
        var name: String
        var cascade: String
        /// The frame is turned by this angle (radians, `rotate`) before the cascade runs.
        var angle = 0.0
        /// The frame is mirrored before the cascade runs.
        var mirrored = false
        var view: String
        /// The scale the pass looks at the frame (a face needs 30 pixels there). The turned passes need the full
        /// frame (at half width they missed the test's tilted faces); the side passes look at half width, a quarter
        /// of the cost.
        var scale = 1.0

        /// The passes a configuration asks for (the frontal one first: it sits in the chain).
        static func passes(_ configuration: VideoCapture.Configuration) -> [FacePass] {
            guard let frontal = configuration.faceProfile else { return [] }
            var passes = [FacePass(name: "faces", cascade: frontal, view: "frontal")]
            if configuration.tiltAngle != 0 {
                passes.append(
                    FacePass(name: "faces-left", cascade: frontal, angle: configuration.tiltAngle, view: "tilted"))
                passes.append(
                    FacePass(name: "faces-right", cascade: frontal, angle: -configuration.tiltAngle, view: "tilted"))
            }
            if let side = configuration.sideFaceProfile, FileManager.default.fileExists(atPath: side) {
                passes.append(FacePass(name: "faces-side", cascade: side, view: "side", scale: 0.5))
                passes.append(
                    FacePass(name: "faces-side-mirrored", cascade: side, mirrored: true, view: "side", scale: 0.5))
            }
            return passes
        }

        /// A face this pass found (in its turned or mirrored frame of `width`×`height`) in the frame's own pixels.
        func unturned(_ found: VideoCapture.Face, width frameWidth: Double, height frameHeight: Double)
            -> VideoCapture.Face
        {
            let face = VideoCapture.Face(
                x: found.x / scale, y: found.y / scale, width: found.width / scale, height: found.height / scale)
            let (width, height) = (frameWidth, frameHeight)
            var centerX = face.x + face.width / 2
            var centerY = face.y + face.height / 2
            if mirrored { centerX = width - centerX }
            if angle != 0 {
                // `rotate` maps p to c + R(p − c) with R = [[cos, sin], [−sin, cos]]: turn back with R's inverse.
                let dx = centerX - width / 2
                let dy = centerY - height / 2
                centerX = width / 2 + dx * cos(angle) - dy * sin(angle)
                centerY = height / 2 + dx * sin(angle) + dy * cos(angle)
            }
            return VideoCapture.Face(
                x: centerX - face.width / 2, y: centerY - face.height / 2, width: face.width, height: face.height,
                view: view)
        }
    }

    private struct SinkState {
        /// Faces by frame timestamp (nanoseconds) and pass, until the frame takes them.
        var faces: [UInt64: [String: [VideoCapture.Face]]] = [:]
        /// Frames waiting for their faces.
        var parked: [VideoCapture.Frame] = []
        var linkedVideo = false
    }

    let source: VideoSourceSpec
    private let configuration: VideoCapture.Configuration
    private let liveFeed: LiveVideoFeed
    private let pipeline: Pipeline
    private let appSource: AppSource?
    private let detectsFaces: Bool
    private let passes: [FacePass]
    private let onFrame: @Sendable (VideoCapture.Frame) -> Void
    private let onPicture: @Sendable (VideoCapture.Picture) -> Void
    private let onPlaying: @Sendable () -> Void
    private let state = Mutex(SinkState())
    private let stopRequested = Atomic<Bool>(false)

    /// Builds the pipeline (NULL: nothing runs yet).
    /// - Throws: ``VideoCaptureError`` when GStreamer or an element is missing.
    init(
        source: VideoSourceSpec, configuration: VideoCapture.Configuration, liveFeed: LiveVideoFeed,
        detectsFaces: Bool, onFrame: @escaping @Sendable (VideoCapture.Frame) -> Void,
        onPicture: @escaping @Sendable (VideoCapture.Picture) -> Void,
        onPlaying: @escaping @Sendable () -> Void
    ) throws(VideoCaptureError) {
        self.source = source
        self.configuration = configuration
        self.liveFeed = liveFeed
        self.detectsFaces = detectsFaces
        self.passes = detectsFaces ? FacePass.passes(configuration) : []
        self.onFrame = onFrame
        self.onPicture = onPicture
        self.onPlaying = onPlaying
        do {
            let elements = try Self.build(
                source, configuration: configuration, channel: liveFeed.channel, faces: detectsFaces)
            pipeline = elements.pipeline
            appSource = elements.appsrc.map(AppSource.init)
            install(elements)
            liveFeed.attach(valve: elements.valve)
        } catch {
            throw VideoCaptureError(
                code: error.code == .missingElements ? .missingPlugin : .pipelineFailed, message: error.message)
        }
    }

    // MARK: - Building

    private struct Elements {
        var pipeline: Pipeline
        var decoder: Element?
        /// Where a decoder's video pad is linked.
        var head: Element
        var appsrc: Element?
        var valve: Element
        var frames: Element
        var pictures: Element
    }

    static func requiredElements(for source: VideoSourceSpec, faces: Bool) -> [String] {
        let head: [String]
        switch source {
        case .camera: head = ["v4l2src"]
        case .test: head = ["videotestsrc"]
        case .file: head = ["filesrc", "decodebin"]
        case .network: head = ["uridecodebin", "rtspsrc"]
        case .pushed: head = ["appsrc"]
        }
        return head + [
            "videoconvert", "videoscale", "videorate", "capsfilter", "tee", "queue", "jpegenc", "appsink", "valve",
            "intervideosink",
        ] + (faces ? ["facedetect", "rotate", "videoflip", "fakesink"] : [])
    }

    private static func build(
        _ source: VideoSourceSpec, configuration: VideoCapture.Configuration, channel: String, faces: Bool
    ) throws(GStreamerError) -> Elements {
        try GStreamer.requireElements(requiredElements(for: source, faces: faces))
        let pipeline = try Pipeline(name: "homeapps-video-capture")
        var chain: [Element] = []
        var decoder: Element?
        var appsrc: Element?
        switch source {
        case .camera(let device):
            let camera = try pipeline.make("v4l2src", name: "source")
            if let device { camera.set("device", device) }
            // At most 720p: enough for a live stream, and a 4K camera would cost a core in conversions.
            let limit = try pipeline.make("capsfilter", name: "camera-size")
            limit.set(
                "caps",
                parsing: "video/x-raw,width=[1,\(configuration.cameraMaximum.width)],"
                    + "height=[1,\(configuration.cameraMaximum.height)]")
            chain += [camera, limit]
        case .test:
            let test = try pipeline.make("videotestsrc", name: "source")
            test.set("is-live", true)
            // A moving ball on a grey background: a picture with light and shape in it, always moving.
            test.set("pattern", parsing: "ball")
            test.set("background-color", UInt32(0xFF80_8080))
            let format = try pipeline.make("capsfilter", name: "test-format")
            format.set("caps", parsing: "video/x-raw,format=I420,width=320,height=240,framerate=15/1")
            chain += [test, format]
        case .file(let path):
            let file = try pipeline.make("filesrc", name: "source")
            file.set("location", path)
            decoder = try pipeline.make("decodebin", name: "decoder")
            try pipeline.link(file, decoder!)
        case .network(let url):
            // source and decoders in one: its video pad is linked to `raw` when it appears (as for a file)
            let network = try pipeline.make("uridecodebin", name: "decoder")
            network.set("uri", url)
            decoder = network
        case .pushed(let width, let height):
            let pushed = try pipeline.make("appsrc", name: "source")
            // Declared at the analysis rate (videorate cannot work from a variable one); the timestamps decide.
            pushed.set(
                "caps",
                parsing: "video/x-raw,format=RGB,width=\(width),height=\(height),"
                    + "framerate=\(configuration.framesPerSecond)/1")
            pushed.set("format", parsing: "time")
            pushed.set("is-live", true)
            pushed.set("block", false)
            appsrc = pushed
            chain.append(pushed)
        }
        let raw = try pipeline.make("tee", name: "raw")
        chain.append(raw)
        // For a file, decodebin → raw is linked when it exposes its video pad.
        try pipeline.link(chain)

        // The live feed: nothing passes the valve while nobody watches; the sink never waits (a closed valve
        // must not hold the pipeline in PAUSED) and keeps only the newest frame.
        let valve = try pipeline.make("valve", name: "live-valve")
        valve.set("drop", true)
        let liveQueue = try leakyQueue("live-queue", in: pipeline)
        let live = try pipeline.make("intervideosink", name: "live")
        live.set("channel", channel)
        live.set("sync", false)
        live.set("async", false)
        try pipeline.link([raw, valve, liveQueue, live])

        // A live source's analysis keeps up or loses frames (never delaying the live branch); pushed frames and a
        // file's wait for it.
        let analysisQueue: Element
        switch source {
        case .camera, .test, .network: analysisQueue = try leakyQueue("analysis-queue", in: pipeline)
        case .file, .pushed: analysisQueue = try pipeline.make("queue", name: "analysis-queue")
        }
        chain = [raw, analysisQueue]
        let rate = try pipeline.make("videorate", name: "rate")
        rate.set("drop-only", true)
        let convert = try pipeline.make("videoconvert", name: "convert")
        let scale = try pipeline.make("videoscale", name: "scale")
        let size = try pipeline.make("capsfilter", name: "size")
        size.set(
            "caps",
            parsing: "video/x-raw,width=\(configuration.width),pixel-aspect-ratio=1/1,"
                + "framerate=\(configuration.framesPerSecond)/1")
        let toRGB = try pipeline.make("videoconvert", name: "to-rgb")
        let rgb = try pipeline.make("capsfilter", name: "rgb")
        rgb.set("caps", parsing: "video/x-raw,format=RGB")
        chain += [rate, convert, scale, size, toRGB, rgb]
        if faces {
            let detector = try pipeline.make("facedetect", name: "faces")
            detector.set("display", false)
            detector.set("qos", false)
            detector.set("updates", parsing: "every_frame")
            detector.set("profile", configuration.faceProfile ?? "")
            chain.append(detector)
        }
        let tee = try pipeline.make("tee", name: "split")
        chain.append(tee)
        try pipeline.link(chain)
        if faces {
            for pass in FacePass.passes(configuration).dropFirst() {
                try addFacePass(pass, width: configuration.width, from: tee, in: pipeline)
            }
        }

        let frameQueue = try leakyQueue("frame-queue", in: pipeline)
        let grayConvert = try pipeline.make("videoconvert", name: "gray-convert")
        let grayScale = try pipeline.make("videoscale", name: "gray-scale")
        let gray = try pipeline.make("capsfilter", name: "gray")
        gray.set("caps", parsing: "video/x-raw,format=GRAY8,width=\(configuration.grayWidth),pixel-aspect-ratio=1/1")
        let frames = try pipeline.make("appsink", name: "frames")
        try pipeline.link([tee, frameQueue, grayConvert, grayScale, gray, frames])

        let pictureQueue = try leakyQueue("picture-queue", in: pipeline)
        let pictureConvert = try pipeline.make("videoconvert", name: "picture-convert")
        let encoder = try pipeline.make("jpegenc", name: "jpeg")
        encoder.set("quality", Int32(configuration.pictureQuality))
        let pictures = try pipeline.make("appsink", name: "pictures")
        try pipeline.link([tee, pictureQueue, pictureConvert, encoder, pictures])
        return Elements(
            pipeline: pipeline, decoder: decoder, head: raw, appsrc: appsrc, valve: valve, frames: frames,
            pictures: pictures)
    }

    /// `split. ! queue ! videoconvert ! rotate|videoflip ! videoconvert ! facedetect ! fakesink`. The queue does not
    /// leak: a slow pass slows the analysis rate (frames are dropped before it, by `videorate`), never the live
    /// stream, and every analysed frame gets every pass's message.
    private static func addFacePass(
        _ pass: FacePass, width: Int, from tee: Element, in pipeline: Pipeline
    ) throws(GStreamerError) {
        let queue = try pipeline.make("queue", name: "\(pass.name)-queue")
        queue.set("max-size-buffers", UInt32(2))
        queue.set("max-size-time", parsing: "0")
        queue.set("max-size-bytes", UInt32(0))
        let shrink = try pipeline.make("videoscale", name: "\(pass.name)-scale")
        let size = try pipeline.make("capsfilter", name: "\(pass.name)-size")
        size.set("caps", parsing: "video/x-raw,width=\(Int((Double(width) * pass.scale).rounded()))")
        let into = try pipeline.make("videoconvert", name: "\(pass.name)-in")
        let turn: Element
        if pass.mirrored {
            turn = try pipeline.make("videoflip", name: "\(pass.name)-flip")
            turn.set("method", parsing: "horizontal-flip")
        } else {
            turn = try pipeline.make("rotate", name: "\(pass.name)-turn")
            turn.set("angle", parsing: String(pass.angle))
        }
        let out = try pipeline.make("videoconvert", name: "\(pass.name)-out")
        let rgb = try pipeline.make("capsfilter", name: "\(pass.name)-rgb")
        rgb.set("caps", parsing: "video/x-raw,format=RGB")
        let detector = try pipeline.make("facedetect", name: pass.name)
        detector.set("display", false)
        detector.set("qos", false)
        detector.set("updates", parsing: "every_frame")
        detector.set("profile", pass.cascade)
        let smallest = Int32((30 * pass.scale).rounded())  // 30 pixels of the frame
        detector.set("min-size-width", smallest)
        detector.set("min-size-height", smallest)
        let sink = try pipeline.make("fakesink", name: "\(pass.name)-sink")
        sink.set("sync", false)
        sink.set("async", false)
        try pipeline.link([tee, queue, shrink, size, into, turn, out, rgb, detector, sink])
    }

    /// A queue that keeps only the newest frames when its branch falls behind (detection must never add delay).
    private static func leakyQueue(_ name: String, in pipeline: Pipeline) throws(GStreamerError) -> Element {
        let queue = try pipeline.make("queue", name: name)
        queue.set("leaky", parsing: "downstream")
        queue.set("max-size-buffers", UInt32(2))
        queue.set("max-size-time", parsing: "0")
        queue.set("max-size-bytes", UInt32(0))
        return queue
    }

    // MARK: - Callbacks (streaming threads)

    private func install(_ elements: Elements) {
        // A file plays at its own pace on the pipeline clock; live sources and pushed frames as they come.
        let paced: Bool
        if case .file = source { paced = true } else { paced = false }
        elements.frames.configureAppSink(caps: "video/x-raw,format=GRAY8", sync: paced) { [self] sample in
            frame(sample)
        }
        elements.pictures.configureAppSink(caps: "image/jpeg", sync: false) { [self] sample in
            if let bytes = sample.bytes(), let size = sample.videoSize {
                onPicture(VideoCapture.Picture(width: size.width, height: size.height, jpeg: bytes))
            }
            return .ok
        }
        if let decoder = elements.decoder {
            let target = elements.head.staticPad("sink")
            decoder.onPadAdded { [self] pad in
                guard pad.mediaType?.hasPrefix("video/") == true, let target, !target.isLinked else { return }
                if pad.link(to: target) { state.withLock { $0.linkedVideo = true } }
            }
        }
    }

    private func frame(_ sample: borrowing Sample) -> FlowResult {
        guard let pixels = sample.bytes(), let size = sample.videoSize, pixels.count >= size.width * size.height
        else { return .ok }
        let timestamp = sample.presentationTime ?? .zero
        let frame = VideoCapture.Frame(
            width: size.width, height: size.height, pixels: Array(pixels.prefix(size.width * size.height)),
            timestamp: timestamp, capturedAt: .now, faces: nil)
        guard detectsFaces else {
            onFrame(frame)
            return .ok
        }
        let key = Self.nanoseconds(timestamp)
        let ready: [VideoCapture.Frame] = state.withLock { state in
            if let found = state.faces[key], found.count == passes.count {
                state.faces[key] = nil
                return [complete(frame, with: found)]
            }
            state.parked.append(frame)
            // Too many waiting (their messages lost): the oldest go on without faces.
            let overflow = max(0, state.parked.count - Self.maximumParkedFrames)
            defer { state.parked.removeFirst(overflow) }
            return Array(state.parked.prefix(overflow))
        }
        for frame in ready { onFrame(frame) }
        return .ok
    }

    /// `frame` with the faces every pass found in it, in its own pixels, one box per face (a face two passes found
    /// is kept as the first pass saw it).
    private func complete(_ frame: VideoCapture.Frame, with found: [String: [VideoCapture.Face]]) -> VideoCapture.Frame
    {
        let width = Double(configuration.width)
        let height = width * Double(frame.height) / Double(max(1, frame.width))
        var faces: [VideoCapture.Face] = []
        for pass in passes {
            for face in found[pass.name] ?? [] {
                let seen = pass.unturned(face, width: width, height: height)
                // A turned frame's corners are filled black: what is found there, partly outside the frame once
                // turned back, is an edge of the turn, not a face.
                guard seen.x >= 0, seen.y >= 0, seen.x + seen.width <= width, seen.y + seen.height <= height else {
                    continue
                }
                let centerX = seen.x + seen.width / 2
                let centerY = seen.y + seen.height / 2
                let known = faces.contains {
                    centerX >= $0.x && centerX <= $0.x + $0.width && centerY >= $0.y && centerY <= $0.y + $0.height
                }
                if !known { faces.append(seen) }
            }
        }
        var complete = frame
        complete.faces = faces
        return complete
    }

    /// A pass's message for the frame at `timestamp`: completes that frame once every pass has spoken, else keeps
    /// the faces.
    private func faces(from source: String, _ structure: Structure) {
        guard structure.name == "facedetect", passes.contains(where: { $0.name == source }),
            case .unsigned(let key)? = structure["timestamp"]
        else { return }
        var found: [VideoCapture.Face] = []
        if case .list(let entries)? = structure["faces"] {
            for case .structure(let face) in entries {
                guard let x = face["x"]?.integer, let y = face["y"]?.integer, let width = face["width"]?.integer,
                    let height = face["height"]?.integer
                else { continue }
                found.append(VideoCapture.Face(pixelX: x, y: y, width: width, height: height))
            }
        }
        let ready: VideoCapture.Frame? = state.withLock { state in
            state.faces[key, default: [:]][source] = found
            if let all = state.faces[key], all.count == passes.count,
                let index = state.parked.firstIndex(where: { Self.nanoseconds($0.timestamp) == key })
            {
                state.faces[key] = nil
                return complete(state.parked.remove(at: index), with: all)
            }
            if state.faces.count > 32, let oldest = state.faces.keys.min() { state.faces[oldest] = nil }
            return nil
        }
        if let ready { onFrame(ready) }
    }

    private static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        return UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
    }

    // MARK: - Pushed frames

    /// Pushes one RGB frame of the `.pushed` size, stamped `at` on the pipeline's timeline.
    func push(rgb: [UInt8], at time: Duration) {
        appSource?.push(bytes: rgb, presentationTime: time, duration: nil)
    }

    // MARK: - The run thread

    /// Runs the pipeline until it fails, ends, or is stopped; returns why it ended (nil: asked to stop).
    func run() -> VideoCaptureError? {
        let outcome = drive()
        liveFeed.attach(valve: nil)
        pipeline.tearDown()
        return outcome
    }

    /// Asks the run to end; callable from any thread.
    func requestStop() {
        guard !stopRequested.exchange(true, ordering: .acquiringAndReleasing) else { return }
        pipeline.bus.post(application: Self.stopMessageName)
    }

    private func drive() -> VideoCaptureError? {
        guard !stopRequested.load(ordering: .acquiring) else { return nil }
        guard pipeline.setState(.playing) else { return failureFromBus() }
        onPlaying()
        while true {
            if stopRequested.load(ordering: .acquiring) { return nil }
            guard let message = pipeline.bus.pop(timeout: .milliseconds(250)) else { continue }
            switch message.kind {
            case .error(let failure):
                return VideoCaptureError(failure, source: source)
            case .endOfStream:
                if case .file = source, pipeline.seekToStart(flushing: true, segment: false) { continue }
                return VideoCaptureError(code: .cameraUnavailable, message: "the video from \(source) ended")
            case .element(let source, let structure):
                faces(from: source, structure)
            default:
                break
            }
        }
    }

    private func failureFromBus() -> VideoCaptureError {
        if let failure = pipeline.bus.popError(timeout: .seconds(1)) {
            return VideoCaptureError(failure, source: source)
        }
        return VideoCaptureError(code: .pipelineFailed, message: "the video pipeline for \(source) did not start")
    }
}

extension VideoCaptureError {
    /// A pipeline error, in words for the source that failed.
    init(_ failure: GStreamerFailure, source: VideoSourceSpec) {
        switch source {
        case .camera(let device) where failure.domain == .resource:
            self.init(
                code: .cameraUnavailable,
                message: "camera \(device ?? "/dev/video0") is not available (\(failure.reason)): is it plugged in "
                    + "and not used by another program? `v4l2-ctl --list-devices` lists cameras")
        case .file(let path) where failure.domain == .resource:
            self.init(code: .cameraUnavailable, message: "cannot read the video file '\(path)' (\(failure.reason))")
        case .network where failure.domain == .resource:
            self.init(
                code: .cameraUnavailable,
                message: "the network camera \(source) cannot be reached (\(failure.reason)): is it on, and is the "
                    + "address right?")
        default:
            self.init(
                code: failure.isMissingPlugin ? .missingPlugin : .pipelineFailed,
                message: "video capture from \(source) failed (\(failure.reason))")
        }
    }
}
