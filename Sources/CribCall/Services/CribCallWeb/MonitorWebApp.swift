public import CanonicalJSON
public import CribCallMonitor
import CribCallProtocol
public import CribCallStore
import DeviceIdentity
public import Foundation
import LocalWebApp
import QRCode
import SafetyDetection
import ServiceDiscovery
public import StreamMedia

/// The app for parents on the monitor (`cribcall monitor --web`): the state its screens show, kept from the
/// monitor's events and its database, pushed to every open page (Server-Sent Events), and the actions the pages
/// take (settings, alert actions, the setup check, pairing, revocation). The HTTP side is in
/// `MonitorWebApp+Routes.swift`; the contract is the module README.
public actor MonitorWebApp {
    /// Who acts when someone presses a button on the monitor's own screen.
    static let actorName = "this monitor"
    /// How many alerts of this run the state carries.
    static let alertLimit = 20

    let service: MonitorService
    let database: CribCallDatabase
    let camera: (any SafetyCamera)?
    let mediaEngine: (any MediaEngine)?
    let version: String
    let wallClock: @Sendable () -> Date

    private var monitor: (id: String, name: String, fingerprint: String, port: Int)?
    private var status: SafetyStatus?
    private var alerts: [Alert] = []
    /// This monitor's own notices (monitoring unable to judge for minutes).
    private var notices = LocalNotices()
    /// What this app could not read or save lately (shown on the pages).
    var health = StoreHealth()
    private var qr: (svg: String, text: String, expiresAt: Int64)?
    private var pin: (pin: String, expiresAt: Int64, attempts: Int)?
    private var connected: [String: Int] = [:]
    private var check: (run: SetupCheck, start: ContinuousClock.Instant)?
    private var checkTicker: Task<Void, Never>?
    private let pages = PageStreams()
    private var pendingPush: Task<Void, Never>?
    private var levelTicker: Task<Void, Never>?
    var live: [String: LiveView] = [:]
    var liveOrder: [String] = []

    struct Alert {
        var alert: SafetyAlert
        var update: AlertUpdated?
    }

    /// - Parameters:
    ///   - camera: The camera the safety detectors watch (nil without `--safety`): its latest picture is the live
    ///     view.
    ///   - mediaEngine: Makes the live view's WebRTC sender (nil: no live view, the page shows pictures).
    ///   - version: Shown in the settings' footer.
    public init(
        service: MonitorService, database: CribCallDatabase, camera: (any SafetyCamera)?,
        mediaEngine: (any MediaEngine)? = nil, version: String, wallClock: @escaping @Sendable () -> Date = Date.init
    ) {
        self.service = service
        self.database = database
        self.camera = camera
        self.mediaEngine = mediaEngine
        self.version = version
        self.wallClock = wallClock
    }

    /// Why safety alerts wait on a first launch.
    static let setupHold = "safety alerts start once setup is finished in the app"

    /// Until the first-launch setup is finished in the app (the disclaimer accepted, the camera placed and checked),
    /// no safety alert is raised: a "Crying detected" must not cover the welcome screen. Called as the app starts
    /// and after every change of the app's preferences.
    public func followSetup() async {
        // Unreadable, the hold stays as it was (and the pages say why): a failing disk does not undo a setup.
        guard
            let done = health.attempt("read the app's preferences", from: database, { try $0.appPreferences() })?
                .setupComplete
        else { return schedulePush() }
        await service.holdSafetyAlerts(done ? nil : Self.setupHold)
    }

    // MARK: the monitor's events

    /// Takes in one of the monitor's events (all of them pass here, in order).
    public func observe(_ event: MonitorEvent) {
        switch event {
        case .ready(let id, let name, let fingerprint, let port):
            monitor = (id, name, fingerprint, port)
        case .qr(_, let text):
            let svg = (try? QRCodeEncoder.encode(text))?.svg(title: "Pairing QR code") ?? ""
            qr = (svg, text, now + 300_000)
        case .pin(let pin, _, let seconds, let attempts):
            self.pin = (pin, now + Int64(seconds) * 1000, attempts)
        case .pinHidden:
            pin = nil
        case .paired(_, _, _, let method):
            if method == "qr" { qr = nil }
            pin = nil
        case .listenerConnected(_, let listenerId?, _):
            connected[listenerId, default: 0] += 1
        case .listenerDisconnected(_, let listenerId?, _):
            if let count = connected[listenerId] { connected[listenerId] = count > 1 ? count - 1 : nil }
        case .listenerRevoked(let listenerId):
            connected[listenerId] = nil
        case .settingsChanged(let settings):
            if let monitor { self.monitor = (monitor.id, settings.monitorName, monitor.fingerprint, monitor.port) }
        case .safetyStatus(let status):
            self.status = status
        case .safetyAlert(let alert):
            // A triggered alert is taken in from the trigger's answer and again from the event stream.
            guard !alerts.contains(where: { $0.alert.alertId == alert.alertId }) else { break }
            alerts.insert(Alert(alert: alert), at: 0)
            if alerts.count > Self.alertLimit { alerts.removeLast(alerts.count - Self.alertLimit) }
        case .alertUpdated(let update):
            if let index = alerts.firstIndex(where: { $0.alert.alertId == update.alertId }) {
                alerts[index].update = update
            }
        case .cannotJudge(let reason, let minutes):
            notices.cannotJudge(monitorId: monitor?.id ?? "", reason: reason, minutes: minutes, now: wallClock())
        case .judgingAgain:
            notices.judgingAgain(monitorId: monitor?.id ?? "")
        case .noise, .eventNotLogged, .storeFailed, .pairingFailed, .listenerConnected, .unpairedConnections,
            .listenerDisconnected,
            .streamStarted, .streamEnded, .monitoringSwitched:
            break
        }
        schedulePush()
    }

    private var now: Int64 { Int64((wallClock().timeIntervalSince1970 * 1000).rounded()) }

    // MARK: the state

    /// The whole state the screens show (the README's `state`).
    public func state() async -> JSONValue {
        let settings = health.read("read its settings", from: database, or: .defaults) { try $0.monitorSettings() }
        let preferences = health.read("read the app's preferences", from: database, or: AppPreferences()) {
            try $0.appPreferences()
        }
        let name = monitor?.name ?? settings.monitorName
        let listeners = health.read("read the paired listeners", from: database, or: []) { try $0.trustedListeners() }
        let activity = activity()
        var object: [String: JSONValue] = [
            "role": "monitor",
            "version": .string(version),
            "storeProblem": health.json,
            "monitor": [
                "id": monitor.map { .string($0.id) } ?? .null, "name": .string(name),
                "fingerprint": monitor.map { .string($0.fingerprint) } ?? .null,
                "port": monitor.map { .number(Double($0.port)) } ?? .null,
                // Where a listener without discovery reaches it (what "Add by address" asks for).
                "addresses": .array(LocalAddresses.lan().prefix(4).map { .string($0) }),
            ],
            "app": WebAPI.json(preferences),
            "settings": Self.json(settings),
            "camera": ["watched": .bool(camera != nil)],
            "safety": status.map(WebAPI.json) ?? .null,
            "alerts": .array(
                (alerts.map { ($0.alert.detectedAt, json($0)) } + notices.json(names: [monitor?.id ?? "": name]))
                    .sorted { $0.0 > $1.0 }.map(\.1)),
            "activity": .array(activity.map(WebAPI.json)),
            "pairing": [
                "qr": qr.flatMap { qr in
                    qr.expiresAt > now
                        ? [
                            "svg": .string(qr.svg), "text": .string(qr.text),
                            "expiresAt": .number(Double(qr.expiresAt)),
                        ]
                        : nil
                } ?? .null,
                "pin": pin.flatMap { pin in
                    pin.expiresAt > now
                        ? [
                            "pin": .string(pin.pin), "expiresAt": .number(Double(pin.expiresAt)),
                            "attemptsRemaining": .number(Double(pin.attempts)),
                        ] : nil
                } ?? .null,
            ],
            "listeners": .array(
                listeners.map { listener in
                    [
                        "listenerId": .string(listener.listenerId), "name": .string(listener.name),
                        "fingerprint": .string(listener.fingerprint.hex),
                        "connected": .bool(connected[listener.listenerId] != nil),
                        "pairedAt": .number((listener.createdAt.timeIntervalSince1970 * 1000).rounded()),
                    ]
                }),
            "calibration": calibration(),
            "live": liveState,
        ]
        if status == nil, camera != nil, let current = await service.safetyStatus {
            object["safety"] = WebAPI.json(current)
        }
        return .object(object)
    }

    /// The latest entries of the event log, newest first.
    private func activity() -> [ActivityItem] {
        let events = health.read("read its latest events", from: database, or: []) {
            try $0.events(from: 0, to: .max, limit: 20)
        }
        let updates = health.read("read how its latest alerts ended", from: database, or: [:]) {
            try $0.alertUpdates(for: events.filter(\.isSafetyAlert).map(\.eventId))
        }
        return events.map { ActivityWording.item($0, update: updates[$0.eventId]) }
    }

    // MARK: pushing to the pages

    /// A new page listening: the state at once, then after every change; the level five times a second.
    func subscribe() async -> AsyncStream<ServerSentEvent> {
        let first = ServerSentEvent(name: "state", data: await state().canonicalString)
        let stream = pages.open(first: first) { remaining in
            Task { await self.pagesChanged(remaining) }
        }
        startLevelTicker()
        return stream
    }

    /// Ends every page's event stream (before the server closes: it waits for open requests).
    public func closeStreams() {
        pages.closeAll()
    }

    private func pagesChanged(_ remaining: Int) async {
        guard remaining == 0 else { return }
        levelTicker?.cancel()
        levelTicker = nil
        // No page is open: nobody watches a live view.
        await endAllLive()
    }

    /// Sends the state to every page soon (changes within 100 ms go out as one).
    func schedulePush() {
        guard pendingPush == nil, pages.count > 0 else { return }
        pendingPush = Task {
            try? await Task.sleep(for: .milliseconds(100))
            await self.push()
        }
    }

    private func push() async {
        pendingPush = nil
        pages.send(ServerSentEvent(name: "state", data: await state().canonicalString))
    }

    private func startLevelTicker() {
        guard levelTicker == nil else { return }
        levelTicker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(200))
                await self.sendLevel()
            }
        }
    }

    private func sendLevel() async {
        guard let level = await service.soundLevel else { return }
        pages.send(ServerSentEvent(name: "level", data: "{\"level\":\(level)}"))
    }

    // MARK: the final setup check

    /// Starts (or restarts) the final setup check.
    func startCalibration() async -> JSONValue {
        let threshold = health.read("read its settings", from: database, or: .defaults) { try $0.monitorSettings() }
            .threshold
        // Without a camera (an audio-only monitor, the seed's default) the room's noise is all there is to check.
        let items: [SetupCheck.Item] = camera == nil ? [.noise] : SetupCheck.Item.allCases
        check = (SetupCheck(startingAt: .zero, soundThreshold: threshold, items: items), .now)
        checkTicker?.cancel()
        checkTicker = Task {
            while !Task.isCancelled {
                await self.observeCheck()
                if await self.calibrationDone { break }
                try? await Task.sleep(for: .milliseconds(250))
            }
        }
        await observeCheck()
        return calibration()
    }

    private var calibrationDone: Bool {
        guard let check else { return true }
        return check.run.report(at: .now - check.start).done
    }

    private func observeCheck() async {
        guard var current = check else { return }
        let status = camera == nil ? nil : await service.safetyStatus
        current.run.observe(monitoring: status?.monitoring, reason: status?.reason)
        if let level = await service.soundLevel { current.run.hear(level: level) }
        check = current
        schedulePush()
    }

    /// The setup check's progress (the README's `calibration`), or null before one ran.
    func calibration() -> JSONValue {
        guard let check else { return .null }
        let report = check.run.report(at: .now - check.start)
        return [
            "progress": .number(Double(report.progress)), "done": .bool(report.done), "ok": .bool(report.ok),
            "checks": .array(
                report.results.map {
                    [
                        "id": .string($0.item.rawValue), "label": .string($0.item.label),
                        "state": .string($0.state.rawValue), "detail": .string($0.detail),
                    ]
                }),
        ]
    }

    // MARK: actions

    /// An action on one of this run's alerts, by someone at the monitor.
    func act(alertId: String, action: AlertActionKind) async -> JSONValue? {
        if notices.contains(alertId) {
            // A notice of this monitor's own: any action closes it here.
            _ = notices.dismiss(alertId)
            schedulePush()
            return notices.json(names: [:]).first { $0.value["alertId"]?.stringValue == alertId }?.value
        }
        guard alerts.contains(where: { $0.alert.alertId == alertId }),
            let update = await service.act(AlertAction(alertId: alertId, action: action), by: Self.actorName)
        else { return nil }
        // The monitor's event reaches `observe` too; apply it now so the answer shows it.
        observe(.alertUpdated(update))
        return alerts.first { $0.alert.alertId == alertId }.map { json($0) }
    }

    /// The seed's debug trigger (6.3) through the real path.
    func trigger(_ kind: SafetyAlertKind) async -> Result<JSONValue, TriggerRefusal> {
        switch await service.triggerAlert(kind) {
        case .success(let alert):
            observe(.safetyAlert(alert))
            return .success(json(Alert(alert: alert)))
        case .failure(let refusal):
            return .failure(refusal)
        }
    }

    /// Shows a fresh pairing QR code.
    func showQR() async {
        let payload = await service.showQR()
        observe(.qr(payload: payload, text: payload.qrText))
    }

    /// Unpairs a listener. - Returns: false when there is no such listener. - Throws: The store's error (still
    /// paired).
    func revoke(listenerId: String) async throws -> Bool {
        guard try database.revokeListener(id: listenerId) else { return false }
        await service.reloadTrust()
        connected[listenerId] = nil
        schedulePush()
        return true
    }

    /// The camera's latest picture.
    func picture() -> [UInt8]? {
        camera?.latestEvidence?.jpeg
    }
}
