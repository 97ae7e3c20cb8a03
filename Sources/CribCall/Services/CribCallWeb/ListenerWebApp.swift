public import CanonicalJSON
public import ControlTransport
public import CribCallListener
import CribCallProtocol
public import CribCallStore
public import DeviceIdentity
public import Foundation
import LocalWebApp
public import Logging
public import ServiceDiscovery
public import StreamMedia

/// The app for parents on a parent's machine (`cribcall listen --web`): every paired monitor's state (connected,
/// link lost, its safety status), the alerts with their actions, the monitors found on the LAN and PIN pairing, and
/// live streams played in the page (``BrowserMediaEngine``). The HTTP side is in `ListenerWebApp+Routes.swift`; the
/// contract is the module README.
public actor ListenerWebApp {
    /// How many alerts and activity lines the state carries.
    static let alertLimit = 20
    static let activityLimit = 30

    /// The listener the app shows and drives.
    public nonisolated let service: ListenerService
    let database: CribCallDatabase
    let browser: (any ServiceBrowser)?
    let version: String
    /// This listener's name, as monitors show it.
    let name: String
    let pages = PageStreams()
    /// The page's receivers; ``ListenRequest`` gives it to the service as its media engine.
    public nonisolated let media: BrowserMediaEngine
    private let signals: AsyncStream<BrowserMediaEngine.Signal>

    private var connections: [String: (state: String, reason: String?)] = [:]
    private var statuses: [String: SafetyStatus] = [:]
    /// Whether monitoring is switched on at each monitor (its MONITOR_STATE), while known.
    private var monitoring: [String: MonitoringSwitch] = [:]
    /// When each monitor last heard a sound (its NOISE_EVENT's time, ms), this run.
    private var lastNoise: [String: Int64] = [:]
    private var alerts: [(monitorId: String, alert: SafetyAlert, update: AlertUpdated?)] = []
    /// Noises, lost links and refusals, raised here like alerts.
    private var notices = LocalNotices()
    /// What this app could not read or save lately (shown on the pages).
    private var health = StoreHealth()
    /// Monitors whose safety monitoring has not judged since when (paused or stale), and why: after
    /// ``cannotJudgeAfter`` the parent is told out loud here, as the monitor's own app tells (issue 32, item 10).
    private var unjudged: [String: (since: ContinuousClock.Instant, reason: String)] = [:]
    /// How long a monitor may not judge before its notice rings (the monitor's own notice waits as long).
    let cannotJudgeAfter: Duration
    private var streams: [String: (monitorId: String, mediaType: MediaType, state: String)] = [:]
    /// When a stream the monitor is about to stop ends (ms since 1970; STREAM_ENDING_SOON), until it is kept live.
    private var endingAt: [String: Int64] = [:]
    /// Streams kept live from a page: a warning that crossed the pin on its way is stale.
    private var kept: Set<String> = []
    /// The latest streams that ended, and why (the page says it).
    private var endedStreams: [(sessionId: String, monitorId: String, reason: String)] = []
    private var discovered: [ListenerService.ScannedMonitor] = []
    private var scanning = false
    private var scanProblem: String?
    var pairing: PairingState?
    private var pendingPush: Task<Void, Never>?
    /// This run in the history.
    private var run: MonitoringRun?

    /// PIN pairing from the page, while it runs.
    struct PairingState {
        var name: String
        /// `connecting`, `enter_pin`, `checking`, `paired` or `failed`.
        var state: String
        var attemptsRemaining: Int?
        var error: String?
        let inbox: PINInbox
        var task: Task<Void, Never>?

        init(name: String, state: String, inbox: PINInbox, task: Task<Void, Never>?) {
            self.name = name
            self.state = state
            self.inbox = inbox
            self.task = task
        }
    }

    /// Makes the listener service this app serves, with the page's receivers (and `fallback`) as its media engine.
    /// - Parameters:
    ///   - fallback: Plays streams while no page is open (GStreamer; nil: only pages play them).
    ///   - browser: Finds monitors on the LAN for pairing (nil: pairing needs an address).
    ///   - logger: The program's logger, for the listener service.
    public init(
        identity: DeviceIdentity, name: String, database: CribCallDatabase, connector: any ControlConnector,
        fallback: (any MediaEngine)?, browser: (any ServiceBrowser)?, version: String,
        cannotJudgeAfter: Duration = .seconds(3 * 60), logger: Logger = Logger(label: "cribcall")
    ) {
        self.cannotJudgeAfter = cannotJudgeAfter
        let (signals, signal) = AsyncStream.makeStream(of: BrowserMediaEngine.Signal.self)
        let media = BrowserMediaEngine(fallback: fallback) { signal.yield($0) }
        self.signals = signals
        self.media = media
        self.database = database
        self.browser = browser
        self.version = version
        self.name = name
        service = ListenerService(
            identity: identity, name: name, database: database, connector: connector, mediaEngine: media,
            logger: logger)
    }

    /// Passes signals for the pages on, and records this run for the history (call once, as the app starts).
    public func start() {
        let signals = signals
        Task { for await signal in signals { await self.deliver(signal) } }
        run = MonitoringRun(database: database) { what, error in
            Task { await self.noteStore(what, error) }
        }
    }

    /// One night of what this listener heard.
    /// - Throws: `NightRange.Invalid` for a range that is not tonight, last-night or a date; the store's error when
    ///   the history cannot be read.
    func history(_ range: String) throws -> JSONValue {
        let names = Dictionary(
            try database.trustedMonitors().map { ($0.monitorId, $0.name) }, uniquingKeysWith: { a, _ in a })
        return try HistoryReport.json(range, now: Date(), database: database, listening: true) { from, to in
            let events = try database.receivedEvents(from: from, to: to, limit: HistoryReport.historyLimit)
            return events.map { ($0.asLogged, names[$0.monitorId] ?? "A monitor no longer paired") }
        }
    }

    // MARK: the listener's events

    /// A monitor that stops judging (paused, stale) is noted; one still not judging ``cannotJudgeAfter`` later gets
    /// a ringing notice, which closes when it judges again.
    private func judged(_ status: SafetyStatus, monitorId: String) {
        guard status.monitoring != .active else {
            unjudged[monitorId] = nil
            notices.judgingAgain(monitorId: monitorId)
            return
        }
        let reason = status.reason ?? status.monitoring.rawValue
        if let known = unjudged[monitorId] {
            unjudged[monitorId] = (known.since, reason)
            return
        }
        let since = ContinuousClock.now
        unjudged[monitorId] = (since, reason)
        let wait = cannotJudgeAfter
        Task { [weak self] in
            try? await Task.sleep(for: wait)
            await self?.stillUnjudged(monitorId: monitorId, since: since)
        }
    }

    private func stillUnjudged(monitorId: String, since: ContinuousClock.Instant) {
        guard let known = unjudged[monitorId], known.since == since else { return }
        let minutes = Int(((ContinuousClock.now - since) / .seconds(60)).rounded(.down))
        notices.cannotJudge(monitorId: monitorId, reason: known.reason, minutes: max(1, minutes))
        schedulePush()
    }

    /// Takes in one of the listener's events (all of them pass here, in order).
    public func observe(_ event: ListenerEvent) {
        switch event {
        case .connected(let monitorId, let name, _), .linkRestored(let monitorId, let name):
            connections[monitorId] = ("connected", nil)
            notices.linkBack(monitorId: monitorId, name: PeerName.sanitized(name))
        case .linkLost(let monitorId, let name, let reason):
            connections[monitorId] = ("link_lost", reason)
            statuses[monitorId] = nil
            unjudged[monitorId] = nil  // the lost link's own notice says more
            notices.linkLost(monitorId: monitorId, name: PeerName.sanitized(name))
        case .unauthorized(let monitorId, let name, let message):
            connections[monitorId] = ("unauthorized", message)
            statuses[monitorId] = nil
            unjudged[monitorId] = nil
            notices.unauthorized(monitorId: monitorId, name: PeerName.sanitized(name), message: message)
        case .noise(let monitorId, let name, let event):
            notices.noise(monitorId: monitorId, name: PeerName.sanitized(name), event: event)
            lastNoise[monitorId] = max(lastNoise[monitorId] ?? 0, event.timestamp)
            // The monitor's automatic stream for this noise: its offer will name no monitor.
            if let automatic = event.autoStreamSessionId { opened[automatic] = monitorId }
            health.attempt(Self.savingHistory, from: database) {
                try $0.recordReceivedEvent(
                    ReceivedEventRecord(
                        eventId: event.eventId, monitorId: monitorId, seq: event.seq, kind: event.kind,
                        timestamp: event.timestamp, peakLevel: event.peakLevel, severity: nil))
            }
        case .monitoring(let monitorId, let name, let state, _):
            monitoring[monitorId] = state
            if state == .off {
                notices.monitoringOff(monitorId: monitorId, name: PeerName.sanitized(name))
            } else {
                notices.monitoringOn(monitorId: monitorId, name: PeerName.sanitized(name))
            }
        case .safetyStatus(let monitorId, _, let status):
            statuses[monitorId] = status
            judged(status, monitorId: monitorId)
        case .safetyAlert(let monitorId, _, let alert):
            guard !alerts.contains(where: { $0.alert.alertId == alert.alertId }) else { break }
            alerts.insert((monitorId, alert, nil), at: 0)
            if alerts.count > Self.alertLimit { alerts.removeLast(alerts.count - Self.alertLimit) }
            health.attempt(Self.savingHistory, from: database) {
                try $0.recordReceivedEvent(
                    ReceivedEventRecord(
                        eventId: alert.alertId, monitorId: monitorId, seq: alert.seq, kind: alert.kind.rawValue,
                        timestamp: alert.detectedAt, peakLevel: 0, severity: alert.severity.rawValue))
            }
        case .alertUpdated(_, _, let update):
            if let index = alerts.firstIndex(where: { $0.alert.alertId == update.alertId }) {
                alerts[index].update = update
            }
            health.attempt("save how an alert ended in the history", from: database) {
                try $0.recordAlertUpdate(
                    AlertUpdateRecord(
                        alertId: update.alertId, state: update.state.rawValue, byName: update.by, at: update.at,
                        mutedUntil: update.mutedUntil))
            }
        case .alertsNotKept:
            break  // the replayed alerts that follow are what the page lists
        case .storeFailed:
            break  // the service's own store; the line `cribcall listen` prints says it
        case .streamStarted(let monitorId, let sessionId, let mediaType):
            streams[sessionId] = (monitorId, mediaType, "playing")
        case .streamEndingSoon(_, let sessionId, let seconds):
            guard !kept.contains(sessionId) else { break }
            endingAt[sessionId] = Int64(Date().timeIntervalSince1970 * 1000) + Int64(max(0, seconds)) * 1000
        case .streamEnded(let monitorId, let sessionId, let reason):
            streams[sessionId] = nil
            endingAt[sessionId] = nil
            kept.remove(sessionId)
            endedStreams.insert((sessionId, monitorId, reason), at: 0)
            if endedStreams.count > 5 { endedStreams.removeLast() }
        }
        schedulePush()
    }

    /// Work on the store done elsewhere (this run's record in the history) failed, or (nil) works again.
    private func noteStore(_ what: String, _ error: (any Error)?) {
        health.attempt(what, from: database) { _ in if let error { throw error } }
        schedulePush()
    }

    /// What a failure to record a heard alert loses.
    private static let savingHistory = "save a heard alert in the history"

    /// The latest events heard, newest first, in calm words with their monitor's name, with how each alert ended.
    private func recentActivity(names: [String: String]) -> [ActivityItem] {
        let events = health.read("read the latest alerts heard", from: database, or: []) {
            try $0.receivedEvents(from: 0, to: .max, limit: Self.activityLimit)
        }
        let updates = health.read("read how the latest alerts ended", from: database, or: [:]) {
            try $0.alertUpdates(for: events.filter { $0.severity != nil }.map(\.eventId))
        }
        return events.map { event in
            var item = ActivityWording.item(event.asLogged, update: updates[event.eventId], heard: true)
            item.monitorName = names[event.monitorId] ?? "A monitor no longer paired"
            return item
        }
    }

    // MARK: the state

    /// The whole state the screens show (the README's listener `state`).
    public func state() -> JSONValue {
        let monitors = health.read("read the paired monitors", from: database, or: []) { try $0.trustedMonitors() }
        let names = Dictionary(monitors.map { ($0.monitorId, $0.name) }, uniquingKeysWith: { first, _ in first })
        let preferences = health.read("read the alert preferences", from: database, or: AppPreferences()) {
            try $0.appPreferences()
        }
        let onNoise = health.read("read what to do on a noise", from: database, or: .notify) {
            try $0.listenerOnNoise()
        }
        let activity = recentActivity(names: names)
        return [
            "role": "listener",
            "version": .string(version),
            "storeProblem": health.json,
            "app": WebAPI.json(preferences),
            "settings": ["onNoise": .string(onNoise.rawValue)],
            "monitors": .array(
                monitors.map { monitor in
                    let connection = connections[monitor.monitorId]
                    return [
                        "monitorId": .string(monitor.monitorId), "name": .string(monitor.name),
                        "fingerprint": .string(monitor.fingerprint.hex),
                        "connection": .string(connection?.state ?? "connecting"),
                        "reason": connection?.reason.map { .string($0) } ?? .null,
                        "safety": statuses[monitor.monitorId].map(WebAPI.json) ?? .null,
                        "monitoring": monitoring[monitor.monitorId].map { .string($0.rawValue) } ?? .null,
                        "lastNoiseAt": lastNoise[monitor.monitorId].map { .number(Double($0)) } ?? .null,
                    ]
                }),
            "alerts": .array(
                (alerts.map { entry in
                    var object = WebAPI.json(entry.alert, update: entry.update).objectValue ?? [:]
                    object["monitorId"] = .string(entry.monitorId)
                    object["monitorName"] = .string(names[entry.monitorId] ?? "Monitor")
                    return (entry.alert.detectedAt, JSONValue.object(object))
                } + notices.json(names: names))
                .sorted { $0.0 > $1.0 }.prefix(Self.alertLimit).map(\.1)),
            "activity": .array(activity.map(WebAPI.json)),
            "streams": .array(
                streams.sorted { $0.key < $1.key }.map { sessionId, stream in
                    [
                        "sessionId": .string(sessionId), "monitorId": .string(stream.monitorId),
                        "mediaType": .string(stream.mediaType.rawValue), "state": .string(stream.state),
                        "endsAt": endingAt[sessionId].map { .number(Double($0)) } ?? .null,
                    ]
                }),
            "endedStreams": .array(
                endedStreams.map {
                    [
                        "sessionId": .string($0.sessionId), "monitorId": .string($0.monitorId),
                        "reason": .string($0.reason),
                    ]
                }),
            "discovered": .array(
                discovered.map { found in
                    [
                        "monitorId": .string(found.monitor.monitorId), "name": .string(found.monitor.monitorName),
                        "host": found.monitor.hosts.first.map { .string($0) } ?? .null,
                        "port": .number(Double(found.monitor.port)),
                        "fingerprint": .string(found.monitor.certFingerprint), "paired": .bool(found.paired),
                    ]
                }),
            "scanning": .bool(scanning),
            "scanProblem": scanProblem.map { .string($0) } ?? .null,
            "listener": ["name": .string(name)],
            "pairing": pairing.map { pairing in
                [
                    "name": .string(pairing.name), "state": .string(pairing.state),
                    "attemptsRemaining": pairing.attemptsRemaining.map { .number(Double($0)) } ?? .null,
                    "error": pairing.error.map { .string($0) } ?? .null,
                ]
            } ?? .null,
        ]
    }

    /// "Dismiss" of a notice (a noise, a lost link) on a page: closed for every page of this listener. False when
    /// `alertId` is not one (a monitor's alert, acted on over the link).
    func dismissNotice(_ alertId: String) -> Bool {
        guard notices.dismiss(alertId) else { return false }
        schedulePush()
        return true
    }

    /// A stream kept live (from a page) no longer ends by itself: its end in sight is dropped, and a warning that
    /// crossed the pin on its way is ignored.
    public func streamKept(sessionId: String) {
        guard streams[sessionId] != nil else { return }
        kept.insert(sessionId)
        guard endingAt.removeValue(forKey: sessionId) != nil else { return }
        schedulePush()
    }

    // MARK: pages

    /// A new page listening: the state at once, then after every change, and its streams' signaling.
    func subscribe() -> AsyncStream<ServerSentEvent> {
        let stream = pages.open(first: ServerSentEvent(name: "state", data: state().canonicalString)) { remaining in
            Task { await self.pagesChanged(remaining) }
        }
        media.setPagesOpen(pages.count)
        // A page that opens while a stream waits for its answer gets the offer too.
        for receiver in media.receivers {
            if let offer = receiver.offer {
                pages.send(
                    Self.signalEvent(
                        .offer(sessionId: receiver.sessionId, sdp: offer, mediaType: receiver.mediaType),
                        monitorId: opened[receiver.sessionId]))
            }
        }
        return stream
    }

    private func pagesChanged(_ remaining: Int) {
        media.setPagesOpen(remaining)
        // The last page went away: nobody plays its streams any more.
        if remaining == 0 {
            for receiver in media.receivers { receiver.end(reason: "the app's page was closed") }
        }
    }

    /// Ends every page's event stream (before the server closes), and this run's record in the history.
    public func closeStreams() {
        pages.closeAll()
        run?.end()
        run = nil
    }

    func schedulePush() {
        guard pendingPush == nil, pages.count > 0 else { return }
        pendingPush = Task {
            try? await Task.sleep(for: .milliseconds(100))
            await self.push()
        }
    }

    private func push() {
        pendingPush = nil
        pages.send(ServerSentEvent(name: "state", data: state().canonicalString))
    }

    private func deliver(_ signal: BrowserMediaEngine.Signal) {
        if case .offer(let sessionId, _, let mediaType) = signal, streams[sessionId] == nil {
            streams[sessionId] = (opened[sessionId] ?? "", mediaType, "starting")
            schedulePush()
        }
        var monitorId: String?
        if case .offer(let sessionId, _, _) = signal { monitorId = opened[sessionId] }
        pages.send(Self.signalEvent(signal, monitorId: monitorId))
    }

    private var opened: [String: String] = [:]

    /// A stream's signaling for the page: `event: stream` with `{type: offer|candidate|end, sessionId, …}`.
    static func signalEvent(_ signal: BrowserMediaEngine.Signal, monitorId: String? = nil) -> ServerSentEvent {
        let value: JSONValue
        switch signal {
        case .offer(let sessionId, let sdp, let mediaType):
            value = [
                "type": "offer", "sessionId": .string(sessionId), "sdp": .string(sdp),
                "mediaType": .string(mediaType.rawValue),
                "monitorId": monitorId.map { .string($0) } ?? .null,
            ]
        case .candidate(let sessionId, let candidate):
            value = ["type": "candidate", "sessionId": .string(sessionId), "candidate": WebAPI.json(candidate)]
        case .end(let sessionId, let reason):
            value = ["type": "end", "sessionId": .string(sessionId), "reason": .string(reason)]
        }
        return ServerSentEvent(name: "stream", data: value.canonicalString)
    }

    // MARK: actions

    /// Opens a stream from a connected monitor; its offer reaches the pages on their event streams.
    func openStream(monitorId: String, mediaType: MediaType) async throws -> String {
        let sessionId = try await service.openStream(monitorId: monitorId, mediaType: mediaType)
        opened[sessionId] = monitorId
        if var stream = streams[sessionId] {
            stream.monitorId = monitorId
            streams[sessionId] = stream
        } else {
            streams[sessionId] = (monitorId, mediaType, "starting")
        }
        schedulePush()
        return sessionId
    }

    /// Scans the LAN for monitors for `duration`; what went wrong stays in the state (`scanProblem`).
    func scan(for duration: Duration = .seconds(3)) async {
        guard let browser else {
            scanProblem = "Looking for monitors is off here: add the monitor by its address."
            return
        }
        scanning = true
        scanProblem = nil
        schedulePush()
        defer {
            scanning = false
            schedulePush()
        }
        do {
            discovered = try await service.scan(using: browser, for: duration)
        } catch {
            scanProblem = "Monitors cannot be looked for on this network (\(error)). Add the monitor by its address."
        }
    }

    /// Forgets a paired monitor (tells it when it can be reached).
    /// - Returns: Why not, for no such monitor. - Throws: The store's error when the pairings cannot be read.
    func forget(monitorId: String) async throws -> String? {
        guard let monitor = try database.trustedMonitors().first(where: { $0.monitorId == monitorId }) else {
            return "no paired monitor \(monitorId.prefix(64))"
        }
        await service.unfollow(monitorId: monitorId)
        _ = try? await service.forget(monitor)
        connections[monitorId] = nil
        statuses[monitorId] = nil
        schedulePush()
        return nil
    }
}
