import CribCallControl
public import CribCallProtocol
import CribCallStore
public import Foundation
public import SafetyDetection
import SoundDetection

/// A camera the monitor's safety detectors watch: grey frames with the faces found in them, its loss, and its
/// latest picture for an alert's evidence. `VideoCapture` is one; tests use a twin.
public protocol SafetyCamera: Sendable {
    /// The camera's events (one consumer).
    func safetyEvents() -> AsyncStream<SafetyCameraEvent>
    /// The latest frame as a JPEG, if any.
    var latestEvidence: (width: Int, height: Int, jpeg: [UInt8])? { get }
    func start()
    func stop()
    /// Tries the camera again now (the app's "Reconnect camera").
    func reconnect()
}

public enum SafetyCameraEvent: Sendable {
    /// A frame, the faces found in it (nil: no face detector), and when it was captured.
    case frame(GrayFrame, faces: [FaceBox]?, at: ContinuousClock.Instant)
    /// The camera went away, in words.
    case lost(String)
}

/// The safety detectors' state while a camera is watched (MonitorService holds it).
struct SafetyRun {
    var monitor: SafetyMonitor
    var analyzer = FrameAnalyzer()
    var cry: CryDetector
    let origin: ContinuousClock.Instant
    let camera: any SafetyCamera
    var statusSeq: Int64 = 0
    var status: SafetyStatus?
    /// Recent alerts (newest last, at most 200): which kind each id is, for ALERT_ACTION.
    var alerts: [(id: String, kind: SafetyAlertKind)] = []

    func time(_ instant: ContinuousClock.Instant) -> Duration { instant - origin }
}

extension MonitorService {
    /// Watches `camera` with the safety detectors (PROTOCOL.md §11) until the task is cancelled: statuses and alerts
    /// go to the paired listeners; crying is heard in the sound detection's audio while this runs.
    public nonisolated func watchSafety(camera: any SafetyCamera) async {
        let events = camera.safetyEvents()
        await beginSafety(camera: camera)
        camera.start()
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(250))
                await self.handleSafety { .tick(at: $0) }
            }
        }
        await withTaskCancellationHandler {
            for await event in events {
                switch event {
                case .frame(let frame, let faces, let at):
                    await self.safetyFrame(frame, faces: faces, at: at)
                case .lost(let reason):
                    await self.handleSafety { .cameraLost(reason: reason, at: $0) }
                }
            }
        } onCancel: {
            camera.stop()
        }
        ticker.cancel()
        await endSafety()
    }

    private func beginSafety(camera: any SafetyCamera) {
        let origin = ContinuousClock.now
        safety = SafetyRun(
            monitor: SafetyMonitor(settings: Self.safetySettings(settings, held: safetyAlertsHeld)),
            cry: CryDetector(sensitivity: CryDetector.Sensitivity(rawValue: settings.crySensitivity) ?? .medium),
            origin: origin, camera: camera)
        // The first status goes out with the first tick or frame.
    }

    private func endSafety() {
        safety = nil
    }

    /// Holds safety alerts back for `reason` (the app's first-launch setup is not finished: nobody has accepted the
    /// disclaimer or placed the camera), or lets them through again with nil. Detection and status go on.
    public func holdSafetyAlerts(_ reason: String?) {
        guard safetyAlertsHeld != reason else { return }
        safetyAlertsHeld = reason
        applySafetySettings()
    }

    /// The detectors' settings from the monitor's.
    static func safetySettings(_ settings: MonitorSettings, held: String? = nil) -> SafetyMonitor.Settings {
        var safety = SafetyMonitor.Settings()
        safety.area = (try? SleepArea(parsing: settings.sleepArea)) ?? .wholeFrame
        safety.alertsEnabled = settings.safetyAlerts
        safety.alertsHeld = held
        safety.switchedOff = !settings.monitoring
        safety.stillnessLimit = .seconds(settings.stillnessMinutes * 60)
        return safety
    }

    /// Applies changed settings to running detectors (called when the settings change).
    func applySafetySettings() {
        guard var run = safety else { return }
        let new = Self.safetySettings(settings, held: safetyAlertsHeld)
        if new.area != run.monitor.settings.area { run.analyzer.reset() }
        let sensitivity = CryDetector.Sensitivity(rawValue: settings.crySensitivity) ?? .medium
        if sensitivity != run.cry.sensitivity { run.cry = CryDetector(sensitivity: sensitivity) }
        safety = run
        if new != run.monitor.settings { handleSafety { .settings(new, at: $0) } }
    }

    private func safetyFrame(_ frame: GrayFrame, faces: [FaceBox]?, at instant: ContinuousClock.Instant) {
        guard var run = safety else { return }
        let measurement = run.analyzer.analyze(frame, area: run.monitor.settings.area)
        safety = run
        handleSafety(.frame(measurement, faces: faces, at: run.time(instant)))
    }

    /// Feeds 16 kHz audio to the cry detector (from the sound detection loop), and keeps its level for meters.
    func hearCrying(_ chunk: [Float]) {
        soundLevel = SoundLevel.level(rms: SoundLevel.rms(chunk))
        guard var run = safety else { return }
        let detections = run.cry.process(chunk)
        safety = run
        for detection in detections {
            handleSafety { .crying(confidence: detection.confidence, detector: CryDetector.name, at: $0) }
        }
    }

    /// An event stamped now (on the detectors' timeline) through the judgement.
    @discardableResult
    private func handleSafety(_ event: (Duration) -> SafetyMonitor.Event) -> (raised: [SafetyAlert], refusal: String?) {
        guard let run = safety else { return ([], nil) }
        return handleSafety(event(run.time(.now)))
    }

    /// One event through the judgement, and what it decides carried out.
    /// - Returns: The alerts raised, and why a trigger raised nothing.
    @discardableResult
    private func handleSafety(_ event: SafetyMonitor.Event) -> (raised: [SafetyAlert], refusal: String?) {
        guard var run = safety else { return ([], nil) }
        let actions = run.monitor.handle(event)
        safety = run
        var raised: [SafetyAlert] = []
        var refusal: String?
        for action in actions {
            switch action {
            case .status(let status):
                publish(status)
            case .alert(let kind, let confidence, let detector):
                if let alert = raiseAlert(kind, confidence: confidence, detector: detector) { raised.append(alert) }
            case .notRaised(_, let reason):
                refusal = reason
            case .cannotJudge(let reason, let duration):
                emit.yield(.cannotJudge(reason: reason, minutes: Int((duration / .seconds(60)).rounded(.down))))
            case .judgingAgain:
                emit.yield(.judgingAgain)
            }
        }
        return (raised, refusal)
    }

    private func publish(_ status: SafetyMonitor.Status) {
        guard var run = safety else { return }
        run.statusSeq += 1
        let message = SafetyStatus(
            seq: run.statusSeq, monitoring: status.monitoring, reason: status.reason, movement: status.movement,
            position: status.position, faceVisible: status.faceVisible, updatedAt: wallClockMilliseconds())
        run.status = message
        safety = run
        emit.yield(.safetyStatus(message))
        for session in sessions.values where session.listenerId != nil {
            session.outbox.send(.safetyStatus(message))
        }
    }

    private func raiseAlert(_ kind: SafetyAlertKind, confidence: Double, detector: String) -> SafetyAlert? {
        guard var run = safety else { return nil }
        let alertId = UUID().uuidString.lowercased()
        let timestamp = wallClockMilliseconds()
        guard
            let record = try? log(
                NoiseEventRecord(
                    seq: 0, eventId: alertId, kind: kind.rawValue, timestamp: timestamp, peakLevel: 0,
                    autoStreamSessionId: nil, severity: kind.severity.rawValue, confidence: confidence,
                    detector: detector))
        else { return nil }
        // The evidence picture goes to the listeners and is never stored.
        let evidence = run.camera.latestEvidence.flatMap {
            try? SafetyEvidence(width: $0.width, height: $0.height, jpeg: $0.jpeg)
        }
        let alert = SafetyAlert(
            seq: record.seq, alertId: alertId, kind: kind, detectedAt: timestamp, confidence: confidence,
            detector: detector, evidence: evidence)
        run.alerts.append((alertId, kind))
        if run.alerts.count > 200 { run.alerts.removeFirst(run.alerts.count - 200) }
        safety = run
        emit.yield(.safetyAlert(alert))
        for session in sessions.values where session.listenerId != nil {
            session.outbox.send(.safetyAlert(alert))
        }
        return alert
    }

    /// `cribcall alert trigger KIND`: an alert through the real path (paused, stale, muted or turned off: none).
    /// - Returns: The alert raised, or why none was.
    public func triggerAlert(_ kind: SafetyAlertKind) -> Result<SafetyAlert, TriggerRefusal> {
        guard safety != nil else {
            return .failure(
                TriggerRefusal(
                    "this monitor runs no safety detection: start it with a camera (--video-source v4l2 or test)"))
        }
        let outcome = handleSafety { .trigger(kind, at: $0) }
        if let alert = outcome.raised.first(where: { $0.kind == kind }) { return .success(alert) }
        return .failure(TriggerRefusal(outcome.refusal ?? "no alert was raised"))
    }

    /// The current SAFETY_STATUS, for a listener whose session just became trusted.
    func currentSafetyStatus() -> SafetyStatus? { safety?.status }

    /// The safety status last sent; nil when no camera is watched.
    public var safetyStatus: SafetyStatus? { safety?.status }

    /// ALERT_ACTION from a trusted listener: ALERT_UPDATED to every listener; a mute silences that kind for all.
    func handleAlertAction(_ action: AlertAction, from listenerId: String) -> [ControlSession.Action] {
        let name =
            read("read its paired listeners", { try $0.trustedListeners() })?.first { $0.listenerId == listenerId }?
            .name ?? listenerId
        guard act(action, by: name) != nil else {
            return [
                .send(
                    .error(
                        .protocolError, "no recent alert \(action.alertId.prefix(64)) on this monitor",
                        inReplyTo: "ALERT_ACTION"))
            ]
        }
        return []
    }

    /// An action on a recent alert, taken by `name` (a listener, or someone at the monitor): ALERT_UPDATED to every
    /// listener, kept in the event log's history; a mute silences that kind for everyone.
    /// - Returns: The update, or nil when this monitor raised no such alert recently.
    @discardableResult
    public func act(_ action: AlertAction, by name: String) -> AlertUpdated? {
        guard let kind = safety?.alerts.last(where: { $0.id == action.alertId })?.kind else { return nil }
        let now = wallClockMilliseconds()
        var update: AlertUpdated
        switch action.action {
        case .checking:
            update = AlertUpdated(alertId: action.alertId, state: .checking, by: name, at: now)
        case .okay:
            update = AlertUpdated(alertId: action.alertId, state: .okay, by: name, at: now)
        case .mute:
            let minutes = action.muteMinutes
            handleSafety { .mute(kind, duration: .seconds(minutes * 60), at: $0) }
            update = AlertUpdated(
                alertId: action.alertId, state: .muted, by: name, at: now, mutedUntil: now + Int64(minutes) * 60_000)
        }
        do {
            try database.recordAlertUpdate(
                AlertUpdateRecord(
                    alertId: update.alertId, state: update.state.rawValue, byName: update.by, at: update.at,
                    mutedUntil: update.mutedUntil))
        } catch {
            emit.yield(
                .storeFailed(
                    what: "keep \(update.by)'s action on alert \(update.alertId) in the history", reason: "\(error)"))
        }
        emit.yield(.alertUpdated(update))
        for session in sessions.values where session.listenerId != nil {
            session.outbox.send(.alertUpdated(update))
        }
        return update
    }

    func wallClockMilliseconds() -> Int64 {
        Int64((wallClock().timeIntervalSince1970 * 1000).rounded())
    }
}

/// Why `cribcall alert trigger` raised nothing, in words.
public struct TriggerRefusal: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
