import CribCallListener
import CribCallProtocol
public import CribCallRuntime
import CribCallStore
import DeviceIdentityStore
public import Foundation
public import Logging
import Media
import QUIC
import SafetyDetection
import Synchronization

/// CribCall monitors as cameras of the hub: the hub is a CribCall listener (its own identity and pairings in a
/// CribCall data directory inside the hub's), connected to every monitor it paired with. Their noise events and
/// safety alerts come out as ``News`` in the hub's words; a monitor's picture is taken from a short live stream
/// (WebRTC, decoded by GStreamer).
public actor NurseryMonitors {
    /// A paired monitor, as a camera.
    public struct Monitor: Sendable, Hashable {
        public var id: String
        public var name: String
    }

    /// A JPEG and its width.
    public struct Picture: Sendable, Hashable {
        public var jpeg: [UInt8]
        public var width: Int
    }

    /// What happens at the monitors, in the hub's terms.
    public enum News: Sendable, Hashable {
        /// The paired monitors (first, and whenever one is paired or forgotten).
        case monitors([Monitor])
        /// Connected to a monitor (true) or lost it (false, with why).
        case online(monitorId: String, Bool, reason: String?)
        /// A noise event or safety alert: what the API shows as an event. `smartDetectionType` is one of the API's
        /// (noise, cry, face_covered, on_stomach, stillness); `picture` is the alert's evidence when it has one;
        /// `live` is false for one replayed after the link was back (it happened earlier: a picture now would not
        /// show it).
        case event(
            monitorId: String, at: Date, description: String, smartDetectionType: String, confidence: Double?,
            picture: Picture?, live: Bool)
    }

    private let service: ListenerService
    private let database: CribCallDatabase
    private let logger: Logger
    private let pictures: PictureBox?
    /// How often the pairings are read again (a pairing made by `argus-hub monitors pair` while the hub runs).
    private let rescan: Duration
    private var snapshots: [String: Task<Picture?, Never>] = [:]
    private var lastPicture: [String: (picture: Picture, at: ContinuousClock.Instant)] = [:]

    /// - Parameters:
    ///   - data: The hub's CribCall data directory (identity, pairings), created 0700 on first use.
    ///   - name: The name monitors show for the hub.
    ///   - iceAddresses: The local addresses live streams use (empty: every interface but loopback).
    ///   - rescan: How often to look for pairings made by another process.
    public init(
        data: CribCallDataDirectory, name: String, iceAddresses: [String] = [], rescan: Duration = .seconds(2),
        logger: Logger
    ) throws {
        let loaded = try data.identity()
        database = try data.database()
        let pictures = PictureBox()
        var engine: GStreamerMediaEngine?
        do {
            engine = try GStreamerMediaEngine(
                configuration: .init(
                    dtlsCertificate: loaded.dtls, iceAddresses: iceAddresses,
                    receiverOutput: .pictures(.init { pictures.received($0) })))
        } catch {
            logger.warning("monitors' pictures are off: \(error)")
        }
        self.pictures = engine == nil ? nil : pictures
        service = ListenerService(
            identity: loaded.identity, name: name, database: database,
            connector: try QUICConnector(identity: loaded.identity), mediaEngine: engine)
        self.rescan = rescan
        self.logger = logger
    }

    /// The paired monitors now. - Throws: The store's error.
    public func monitors() throws -> [Monitor] {
        Self.monitors(try database.trustedMonitors())
    }

    private static func monitors(_ records: [TrustedMonitorRecord]) -> [Monitor] {
        records.map { Monitor(id: $0.monitorId, name: $0.name) }
    }

    /// Connects to every paired monitor (and to those paired later) and reports what happens until the stream's
    /// consumer stops.
    public func news() async -> AsyncStream<News> {
        let (stream, continuation) = AsyncStream.makeStream(of: News.self)
        let events = await service.listen(keepOpen: true)
        let paired: [TrustedMonitorRecord]
        do {
            paired = try database.trustedMonitors()
        } catch {
            // Looked for again every rescan: they are followed once the database reads.
            logger.error("the paired monitors could not be read", metadata: ["reason": "\(error)"])
            paired = []
        }
        continuation.yield(.monitors(Self.monitors(paired)))
        let listening = Task { [logger] in
            for await event in events {
                if let news = Self.news(event, logger: logger) { continuation.yield(news) }
            }
        }
        let watching = Task { await self.watchPairings(known: Set(paired.map(\.monitorId)), report: continuation) }
        continuation.onTermination = { _ in
            listening.cancel()
            watching.cancel()
        }
        return stream
    }

    /// Follows monitors paired, and stops following those forgotten, by another process.
    private func watchPairings(known: Set<String>, report: AsyncStream<News>.Continuation) async {
        var known = known
        var failing = false
        while (try? await Task.sleep(for: rescan)) != nil {
            let records: [TrustedMonitorRecord]
            do {
                records = try database.trustedMonitors()
                failing = false
            } catch {
                if !failing { logger.error("the paired monitors could not be read", metadata: ["reason": "\(error)"]) }
                failing = true
                continue
            }
            let now = Set(records.map(\.monitorId))
            guard now != known else { continue }
            for record in records where !known.contains(record.monitorId) { await service.follow(record) }
            for gone in known.subtracting(now) { await service.unfollow(monitorId: gone) }
            known = now
            report.yield(.monitors(Self.monitors(records)))
        }
    }

    /// A listener event in the hub's words (nil: nothing the hub shows).
    static func news(_ event: ListenerEvent, logger: Logger) -> News? {
        switch event {
        case .connected(let monitorId, _, _), .linkRestored(let monitorId, _):
            return .online(monitorId: monitorId, true, reason: nil)
        case .linkLost(let monitorId, _, let reason):
            return .online(monitorId: monitorId, false, reason: reason)
        case .unauthorized(let monitorId, let name, let message):
            logger.warning(
                "a monitor no longer trusts the hub; pair again",
                metadata: ["monitor": "\(PeerName.sanitized(name))", "reason": "\(message)"])
            return .online(monitorId: monitorId, false, reason: message)
        case .noise(let monitorId, _, let noise):
            return .event(
                monitorId: monitorId, at: Date(timeIntervalSince1970: Double(noise.timestamp) / 1000),
                description: "Noise detected (level \(noise.peakLevel) of 100)", smartDetectionType: "noise",
                confidence: nil, picture: nil, live: noise.replayed != true)
        case .safetyAlert(let monitorId, _, let alert):
            let picture = alert.evidence.flatMap { evidence in
                evidence.jpegBytes.map { Picture(jpeg: $0, width: evidence.width) }
            }
            return .event(
                monitorId: monitorId, at: Date(timeIntervalSince1970: Double(alert.detectedAt) / 1000),
                description: SafetyWording.alert(alert.kind).title,
                smartDetectionType: alert.kind == .crying ? "cry" : alert.kind.rawValue,
                confidence: alert.confidence, picture: picture, live: alert.replayed != true)
        case .alertsNotKept(_, let name, let count):
            logger.warning(
                "a monitor no longer keeps some alerts of while the hub was away",
                metadata: ["monitor": "\(PeerName.sanitized(name))", "count": "\(count)"])
            return nil
        case .storeFailed(let what, let reason):
            logger.error("the hub's CribCall listener could not \(what)", metadata: ["reason": "\(reason)"])
            return nil
        case .streamStarted, .streamEndingSoon, .streamEnded, .safetyStatus, .alertUpdated, .monitoring:
            return nil
        }
    }

    /// The monitor's picture now: from a short audio and video stream (its first decoded frame), or one taken in
    /// the last two seconds. One stream at a time per monitor: callers meanwhile share its picture.
    /// - Returns: nil when the monitor is not connected, declines, has no camera, or no frame came in `timeout`.
    public func picture(monitorId: String, timeout: Duration = .seconds(8)) async -> Picture? {
        if let recent = lastPicture[monitorId], ContinuousClock.now - recent.at < .seconds(2) { return recent.picture }
        if let running = snapshots[monitorId] { return await running.value }
        let task = Task { await self.takePicture(monitorId: monitorId, timeout: timeout) }
        snapshots[monitorId] = task
        let picture = await task.value
        snapshots[monitorId] = nil
        if let picture { lastPicture[monitorId] = (picture, .now) }
        return picture
    }

    private func takePicture(monitorId: String, timeout: Duration) async -> Picture? {
        guard let pictures else { return nil }
        let sessionId: String
        do {
            sessionId = try await service.openStream(monitorId: monitorId, mediaType: .audioVideo)
        } catch {
            logger.info("no picture from a monitor", metadata: ["monitor": "\(monitorId)", "reason": "\(error)"])
            return nil
        }
        pictures.expect(sessionId)
        let deadline = ContinuousClock.now + timeout
        var picture: Picture?
        while picture == nil, ContinuousClock.now < deadline, !Task.isCancelled {
            picture = pictures.take(sessionId)
            if picture == nil { try? await Task.sleep(for: .milliseconds(50)) }
        }
        pictures.forget(sessionId)
        await service.endStream(sessionId: sessionId)
        if picture == nil {
            logger.info("a monitor's stream gave no picture", metadata: ["monitor": "\(monitorId)"])
        }
        return picture
    }
}

/// The pictures of the streams a snapshot waits for (filled on GStreamer threads).
final class PictureBox: Sendable {
    private let waiting = Mutex<[String: NurseryMonitors.Picture?]>([:])

    func expect(_ sessionId: String) {
        waiting.withLock { $0[sessionId] = .some(nil) }
    }

    func received(_ picture: GStreamerMediaEngine.DecodedPicture) {
        waiting.withLock { waiting in
            guard case .some(nil) = waiting[picture.sessionId] else { return }  // one per stream, for those awaited
            waiting[picture.sessionId] = NurseryMonitors.Picture(jpeg: picture.jpeg, width: picture.width)
        }
    }

    func take(_ sessionId: String) -> NurseryMonitors.Picture? {
        waiting.withLock { $0[sessionId] ?? nil }
    }

    func forget(_ sessionId: String) {
        _ = waiting.withLock { $0.removeValue(forKey: sessionId) }
    }
}
