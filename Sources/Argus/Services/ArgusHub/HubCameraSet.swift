import ArgusPictures
public import ArgusStore
import ArgusVision
public import Foundation
public import Logging
public import ServiceLifecycle
import Synchronization
public import VideoCapture

/// A camera the hub is told to watch (`--camera [NAME=]SPEC`).
public struct CameraSpec: Sendable, Hashable {
    public var name: String
    public var source: VideoSourceSpec

    /// `test`, `v4l2`, `v4l2:/dev/video1`, `file:PATH`, `rtsp://HOST/PATH`, each optionally named:
    /// `Front door=v4l2:/dev/video0`.
    public init(parsing text: String) throws {
        var name: String?
        var spec = text
        if let equals = text.firstIndex(of: "="), !text[..<equals].contains(":") {
            name = String(text[..<equals]).trimmingCharacters(in: .whitespaces)
            spec = String(text[text.index(after: equals)...])
        }
        do {
            source = try VideoSourceSpec(parsing: spec)
        } catch {
            throw HubError("--camera \(text): \(error.message)")
        }
        switch source {
        case .test: self.name = name ?? "Test pattern"
        case .camera(let device): self.name = name ?? "Camera \(device ?? "/dev/video0")"
        case .file(let path): self.name = name ?? URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        case .pushed: self.name = name ?? "Pushed frames"
        case .network(let url): self.name = name ?? "Camera at \(URL(string: url)?.host ?? "the network")"
        }
        guard (1...64).contains(self.name.count) else {
            throw HubError("--camera \(text): a name is 1 to 64 characters.")
        }
    }

    public init(name: String, source: VideoSourceSpec) {
        self.name = name
        self.source = source
    }

    var sourceType: String {
        switch source {
        case .camera: "v4l2"
        case .test, .pushed: "test"
        case .file: "file"
        case .network: "rtsp"
        }
    }
}

/// This run's cameras: each captured at a low rate (`VideoCapture`), its grey frames compared for motion
/// (`MotionDetector`), and every motion an event with a thumbnail of at most 50 KB (`PictureLadder`) in the
/// database. Snapshots are the latest picture made to fit 100 KB. Runs as a service of the hub's application.
public final class HubCameraSet: HubCameras, Service {
    struct Running: Sendable {
        let camera: Camera
        let capture: VideoCapture
    }

    private let running: [Running]
    private let online: Mutex<[String: Bool]>
    private let database: ArgusDatabase
    private let cooldown: Double
    private let retention: EventRetention
    private let logger: Logger
    /// Called with each new event (push notifications hang here).
    private let onEvent: @Sendable (CameraEvent) async -> Void

    /// Opens the cameras (nothing is captured before ``run()``).
    /// - Throws: ``HubError`` when GStreamer lacks what a camera needs (the message names the Debian package).
    public init(
        _ specs: [CameraSpec], database: ArgusDatabase, motionCooldown: Double = 30,
        retention: EventRetention? = nil, logger: Logger,
        onEvent: @escaping @Sendable (CameraEvent) async -> Void = { _ in }
    ) throws {
        var running: [Running] = []
        for spec in specs {
            var configuration = VideoCapture.Configuration()
            configuration.faceProfile = nil
            configuration.width = spec.source == .test ? 320 : 640
            configuration.grayWidth = 160
            configuration.framesPerSecond = 5
            let capture: VideoCapture
            do {
                capture = try VideoCapture(source: spec.source, configuration: configuration)
            } catch {
                throw HubError("--camera \(spec.source): \(error.message)")
            }
            let camera = try database.configuredCamera(
                name: spec.name, source: spec.source.description, sourceType: spec.sourceType)
            try database.setCameraOnline(camera.id, false)
            running.append(Running(camera: camera, capture: capture))
        }
        self.running = running
        online = Mutex([:])
        self.database = database
        cooldown = motionCooldown
        self.retention = retention ?? EventRetention(database: database, logger: logger)
        self.logger = logger
        self.onEvent = onEvent
    }

    // MARK: HubCameras

    public func cameras() async -> [Camera] {
        let ids = Set(running.map(\.camera.id))
        let stored: [Camera]
        do {
            stored = try database.cameras(only: ids)
        } catch {
            logger.error("the cameras could not be read; listing them as configured", metadata: ["reason": "\(error)"])
            stored = running.map(\.camera)
        }
        let online = online.withLock { $0 }
        return stored.map { camera in
            var camera = camera
            camera.isOnline = online[camera.id] ?? false
            return camera
        }
    }

    public func snapshot(cameraId: String) async -> CameraSnapshot {
        guard let camera = running.first(where: { $0.camera.id == cameraId }) else { return .unknown }
        guard online.withLock({ $0[cameraId] }) == true, let picture = camera.capture.latestPicture else {
            return .offline
        }
        guard
            let fitted = try? await PictureLadder.fit(picture.jpeg, width: picture.width, limit: PictureLadder.snapshot)
        else { return .offline }
        return .jpeg(fitted.jpeg)
    }

    // MARK: Service

    public func run() async throws {
        retention.pruneIfDue()
        await withTaskGroup(of: Void.self) { group in
            for camera in running {
                group.addTask { await self.watch(camera) }
            }
            try? await gracefulShutdown()
            for camera in running { camera.capture.stop() }
        }
    }

    private func watch(_ camera: Running) async {
        let events = camera.capture.events()
        camera.capture.start()
        var detector = MotionDetector(cooldown: cooldown)
        let start = ContinuousClock.now
        for await event in events {
            switch event {
            case .started:
                setOnline(camera.camera.id, true)
                logger.info("camera started", metadata: ["camera": "\(camera.camera.name)"])
            case .lost(let reason):
                setOnline(camera.camera.id, false)
                logger.warning("camera lost", metadata: ["camera": "\(camera.camera.name)", "reason": "\(reason)"])
            case .frame(let frame):
                let time =
                    Double((frame.capturedAt - start).components.seconds)
                    + Double((frame.capturedAt - start).components.attoseconds) / 1e18
                guard
                    let motion = detector.feed(gray: frame.pixels, width: frame.width, height: frame.height, time: time)
                else { continue }
                await record(motion, camera: camera)
            }
        }
    }

    private func record(_ motion: Motion, camera: Running) async {
        var thumbnail: Data?
        if let picture = camera.capture.latestPicture {
            thumbnail = try? await PictureLadder.fit(picture.jpeg, width: picture.width, limit: PictureLadder.thumbnail)
                .jpeg
        }
        do {
            let event = try database.addEvent(
                cameraId: camera.camera.id, description: motion.description, smartDetectionType: "motion",
                confidence: motion.confidence, thumbnail: thumbnail, at: Date())
            logger.info("motion", metadata: ["camera": "\(camera.camera.name)", "where": "\(motion.description)"])
            await onEvent(event)
        } catch {
            logger.error("an event could not be stored: \(error)")
        }
        retention.pruneIfDue()
    }

    private func setOnline(_ id: String, _ value: Bool) {
        online.withLock { $0[id] = value }
        do {
            try database.setCameraOnline(id, value)
        } catch {
            logger.error("a camera's online state could not be saved", metadata: ["reason": "\(error)"])
        }
    }
}
