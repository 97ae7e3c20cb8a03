public import ArgusCribCall
import ArgusPictures
public import ArgusStore
public import Foundation
public import Logging
public import ServiceLifecycle
import Synchronization

/// The CribCall monitors the hub paired with (`argus-hub monitors pair`), as cameras: each monitor's noise events
/// and safety alerts become events, online while the hub is connected to it. A safety alert's evidence is its
/// thumbnail; other live events get a picture from a short stream of the monitor's camera, stored when it comes (the
/// event and its push do not wait for it). Snapshots come the same way. Events replayed after a lost link are
/// stored without a picture, and pushed only when they are less than five minutes old.
public final class HubMonitorCameras: HubCameras, Service {
    private let monitors: NurseryMonitors
    private let database: ArgusDatabase
    private let logger: Logger
    private let onEvent: @Sendable (CameraEvent) async -> Void
    private let retention: EventRetention
    /// Camera rows by monitor id (the paired monitors now), and which are connected.
    private let state = Mutex<(cameras: [String: Camera], online: Set<String>)>(([:], []))

    public init(
        _ monitors: NurseryMonitors, database: ArgusDatabase, retention: EventRetention? = nil, logger: Logger,
        onEvent: @escaping @Sendable (CameraEvent) async -> Void = { _ in }
    ) async throws {
        self.monitors = monitors
        self.database = database
        self.retention = retention ?? EventRetention(database: database, logger: logger)
        self.logger = logger
        self.onEvent = onEvent
        try update(try await monitors.monitors())
    }

    /// How old a replayed event may be and still be pushed (seconds).
    static let pushedReplay: TimeInterval = 300

    /// The camera row's source for a monitor.
    static func source(_ monitorId: String) -> String { "cribcall:\(monitorId)" }

    private func update(_ paired: [NurseryMonitors.Monitor]) throws {
        var cameras: [String: Camera] = [:]
        for monitor in paired {
            let name = String(monitor.name.prefix(64))
            cameras[monitor.id] = try database.monitorCamera(
                source: Self.source(monitor.id), name: name.isEmpty ? "Monitor" : name)
        }
        state.withLock { state in
            state.cameras = cameras
            state.online.formIntersection(cameras.keys)
        }
    }

    /// A paired monitor as the owner sees it.
    public struct PairedMonitor: Sendable, Hashable {
        public var id: String
        public var name: String
        public var online: Bool
    }

    /// The paired monitors, by name.
    public func monitors() async -> [PairedMonitor] {
        state.withLock { state in
            state.cameras.map { PairedMonitor(id: $0.key, name: $0.value.name, online: state.online.contains($0.key)) }
        }.sorted { ($0.name, $0.id) < ($1.name, $1.id) }
    }

    // MARK: HubCameras

    public func cameras() async -> [Camera] {
        let (cameras, online) = state.withLock { ($0.cameras, $0.online) }
        let stored: [Camera]
        do {
            stored = try database.cameras(only: Set(cameras.values.map(\.id)))
        } catch {
            logger.error(
                "the monitors' cameras could not be read; listing them as known", metadata: ["reason": "\(error)"])
            stored = Array(cameras.values)
        }
        let onlineIds = Set(online.compactMap { cameras[$0]?.id })
        return stored.map { camera in
            var camera = camera
            camera.isOnline = onlineIds.contains(camera.id)
            return camera
        }
    }

    public func snapshot(cameraId: String) async -> CameraSnapshot {
        let found = state.withLock { state in
            state.cameras.first { $0.value.id == cameraId }.map { ($0.key, state.online.contains($0.key)) }
        }
        guard let (monitorId, online) = found else { return .unknown }
        guard online, let picture = await monitors.picture(monitorId: monitorId),
            let fitted = try? await PictureLadder.fit(picture.jpeg, width: picture.width, limit: PictureLadder.snapshot)
        else { return .offline }
        return .jpeg(fitted.jpeg)
    }

    // MARK: Service

    public func run() async throws {
        let news = await monitors.news()
        // Cancelled on shutdown: the news end, and the monitors' connections close with them.
        try await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                for await item in news {
                    switch item {
                    case .monitors(let paired):
                        do {
                            try self.update(paired)
                        } catch {
                            self.logger.error("the monitors' cameras could not be stored: \(error)")
                        }
                    case .online(let monitorId, let online, let reason):
                        self.setOnline(monitorId, online, reason: reason)
                    case .event(let monitorId, let at, let description, let type, let confidence, let picture, let live):
                        group.addTask {
                            await self.record(
                                monitorId: monitorId, at: at, description: description, type: type,
                                confidence: confidence, picture: picture, live: live)
                        }
                    }
                }
            }
        }
    }

    private func setOnline(_ monitorId: String, _ online: Bool, reason: String?) {
        let camera = state.withLock { state -> Camera? in
            if online { state.online.insert(monitorId) } else { state.online.remove(monitorId) }
            return state.cameras[monitorId]
        }
        guard let camera else { return }
        do {
            try database.setCameraOnline(camera.id, online)
        } catch {
            logger.error("a camera's online state could not be saved", metadata: ["reason": "\(error)"])
        }
        if online {
            logger.info("monitor connected", metadata: ["camera": "\(camera.name)"])
        } else {
            logger.warning("monitor lost", metadata: ["camera": "\(camera.name)", "reason": "\(reason ?? "")"])
        }
    }

    private func record(
        monitorId: String, at: Date, description: String, type: String, confidence: Double?,
        picture: NurseryMonitors.Picture?, live: Bool
    ) async {
        guard let camera = state.withLock({ $0.cameras[monitorId] }) else { return }
        var thumbnail: Data?
        if let picture {
            thumbnail = try? await PictureLadder.fit(picture.jpeg, width: picture.width, limit: PictureLadder.thumbnail)
                .jpeg
        }
        let event: CameraEvent
        do {
            event = try database.addEvent(
                cameraId: camera.id, description: description, smartDetectionType: type, confidence: confidence,
                thumbnail: thumbnail, at: at)
        } catch {
            logger.error("an event could not be stored: \(error)")
            return
        }
        logger.info("monitor event", metadata: ["camera": "\(camera.name)", "what": "\(description)"])
        retention.pruneIfDue()
        if live || Date().timeIntervalSince(at) < Self.pushedReplay { await onEvent(event) }
        guard live, thumbnail == nil, let picture = await monitors.picture(monitorId: monitorId),
            let fitted = try? await PictureLadder.fit(
                picture.jpeg, width: picture.width, limit: PictureLadder.thumbnail)
        else { return }
        do {
            try database.setThumbnail(eventId: event.id, fitted.jpeg)
        } catch {
            logger.error("an event's thumbnail could not be saved", metadata: ["reason": "\(error)"])
        }
    }
}
