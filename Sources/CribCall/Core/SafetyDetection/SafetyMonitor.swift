public import CribCallProtocol

/// The monitor's safety judgement as a state machine: frames measured by ``FrameAnalyzer``, faces found by a face
/// detector, crying heard, the camera lost, and the passing of time go in; status changes and alerts come out
/// (PROTOCOL.md §11). No clocks inside: every event carries the monotonic time it happened at.
///
/// It never shows a stale value as live and always says why it cannot judge:
/// - **paused** while no frame has come for ``Settings/cameraTimeout`` (2 s) or the camera reported its loss
///   ("camera disconnected"); **stale** while frames come but cannot be judged (too dark, too bright, nothing in
///   the sleep area). Either way movement, position and face are `unknown`/`nil`, no alert is raised, and the
///   detectors start afresh when monitoring is active again (stillness is never counted across a gap).
/// - **hysteresis**: active monitoring turns stale only after frames could not be judged for
///   ``Settings/staleAfter`` (3 s), and stale turns active only after frames could be judged for
///   ``Settings/resumeAfter`` (10 s) — a ball rolling in and out of the sleep area, a lamp flickering, are one
///   change, not one every few seconds. While active frames cannot be judged, nothing is observed and no alert
///   that time brings is raised; that time does not count towards a lost face or stillness. (``FrameAnalyzer``
///   adds the other half: its bounds to enter and to leave a judgement differ.)
/// - **movement**: `moving` while some frame in the last ``Settings/stillAfter`` (3 s) changed by at least
///   ``Settings/movingFraction`` of the sleep area; `still` after that; **unusual stillness** (medium alert) after
///   ``Settings/stillnessLimit`` (20 min) without movement, once until movement resumes.
/// - **face**: visible while a face was found inside the sleep area within ``Settings/faceGrace``. A face seen
///   since monitoring became active and then not seen for ``Settings/faceLostLimit`` (5 s) raises one high alert
///   per loss: **on_stomach** when a large movement that reached well beyond the face (a roll: ≥
///   ``Settings/rollFraction`` of the area, most of it away from the face) came with the loss, else
///   **face_covered** (something over the face changes little besides it). Without a face detector, `faceVisible` is `nil` and position `unknown`.
/// - **position**: `on_back` while a face is visible, `on_stomach` after a loss that came with a roll, else
///   `unknown`.
/// - **crying** (from the audio classifier): a medium alert, at most one per ``Settings/cryingRepeat``.
/// - Alerts of a muted kind are not raised until the mute ends; with ``Settings/alertsEnabled`` off none are.
/// - The status is emitted on every change, at most once per ``Settings/statusInterval`` (a change within the
///   interval goes out on the next event after it, e.g. a tick).
public struct SafetyMonitor: Sendable {
    public struct Settings: Sendable, Hashable {
        public var area = SleepArea.wholeFrame
        public var alertsEnabled = true
        /// Why alerts wait although enabled (e.g. the app's setup is not finished), or nil.
        public var alertsHeld: String?
        /// Monitoring is switched off at the monitor (Stop monitoring): paused, nothing judged or raised, and no
        /// cannot-judge notice (the parent chose it); switched on again, every detector starts afresh.
        public var switchedOff = false
        public var stillnessLimit: Duration = .seconds(20 * 60)
        public var faceLostLimit: Duration = .seconds(5)
        public var stillAfter: Duration = .seconds(3)
        public var cameraTimeout: Duration = .seconds(2)
        public var statusInterval: Duration = .milliseconds(500)
        /// Least changed fraction of the sleep area that is movement.
        public var movingFraction = 0.01
        /// Least changed fraction, around the moment a face is lost, that reads as a roll.
        public var rollFraction = 0.08
        /// How far before and after the face was last seen a roll is looked for.
        public var rollWindow: Duration = .seconds(2)
        /// A face missed for this long still counts as seen (a detector misses the odd frame).
        public var faceGrace: Duration = .seconds(1)
        public var cryingRepeat: Duration = .seconds(120)
        /// How long frames must be unjudgeable before active monitoring turns stale.
        public var staleAfter: Duration = .seconds(3)
        /// How long frames must be judgeable before stale monitoring is active again.
        public var resumeAfter: Duration = .seconds(10)
        /// A face this many times wider than the baby's usual face is an adult's leaning in…
        public var adultFaceRatio = 1.6
        /// …and, before the baby's face size is known, one wider than this fraction of the sleep area.
        public var adultFaceFraction = 0.3
        /// After an adult's face was seen at the cot, a baby's face unseen raises nothing for this long (someone is
        /// there), and the baby's face must be seen again before its loss counts.
        public var attendedGrace: Duration = .seconds(20)
        /// A lost face whose covered-confidence is under this (it was tracked in few frames: a head turning, a
        /// detector unsure) is given ``unsureLostLimit`` instead of ``faceLostLimit``.
        public var sureConfidence = 0.6
        public var unsureLostLimit: Duration = .seconds(15)
        /// How long monitoring may be paused or stale before the parent is told out loud (``Action/cannotJudge(reason:for:)``).
        public var cannotJudgeNotice: Duration = .seconds(3 * 60)

        public init() {}
    }

    /// What SAFETY_STATUS carries (without its sequence number and time, which the service adds).
    public struct Status: Sendable, Hashable {
        public var monitoring: MonitoringState
        public var reason: String?
        public var movement: MovementState
        public var position: SleepPosition
        public var faceVisible: Bool?

        public init(
            monitoring: MonitoringState, reason: String? = nil, movement: MovementState = .unknown,
            position: SleepPosition = .unknown, faceVisible: Bool? = nil
        ) {
            self.monitoring = monitoring
            self.reason = reason
            self.movement = movement
            self.position = position
            self.faceVisible = faceVisible
        }
    }

    public enum Event: Sendable, Hashable {
        /// A measured frame, with the faces found in it (nil: no face detector runs).
        case frame(FrameAnalyzer.Measurement, faces: [FaceBox]?, at: Duration)
        /// The camera is gone (unplugged, its pipeline failed), in words for the status.
        case cameraLost(reason: String, at: Duration)
        /// Time passes (the service ticks a few times a second).
        case tick(at: Duration)
        /// The cry classifier heard crying with this confidence (0…1).
        case crying(confidence: Double, detector: String, at: Duration)
        /// `cribcall alert trigger KIND`: an alert through the real path.
        case trigger(SafetyAlertKind, at: Duration)
        /// A listener muted a kind of alert.
        case mute(SafetyAlertKind, duration: Duration, at: Duration)
        /// The settings changed (sleep area, limits, alerts on or off).
        case settings(Settings, at: Duration)
    }

    public enum Action: Sendable, Hashable {
        case status(Status)
        case alert(SafetyAlertKind, confidence: Double, detector: String)
        /// A trigger that raised nothing, and why (paused, stale, muted, alerts off).
        case notRaised(SafetyAlertKind, reason: String)
        /// Monitoring has been paused or stale for ``Settings/cannotJudgeNotice``, the last reason `reason`: no alert
        /// can be raised, and the parent must be told (once per spell, only while alerts are on and not held).
        case cannotJudge(reason: String, for: Duration)
        /// Monitoring is active again after a ``cannotJudge(reason:for:)``.
        case judgingAgain
    }

    public private(set) var settings: Settings
    private var lastFrameAt: Duration?
    private var cameraLost: String?
    /// The judgement monitoring shows (it follows the frames' own with ``Settings/staleAfter`` and
    /// ``Settings/resumeAfter``); nil until a frame comes and again after a pause.
    private var judgement: FrameAnalyzer.Judgement?
    /// While shown active: since when frames have not been judgeable (nil: the last one was).
    private var unjudgeableSince: Duration?
    /// While shown stale: since when frames have been judgeable (nil: the last one was not).
    private var judgeableSince: Duration?
    private var faceDetector = false
    /// When monitoring last became active (nil while it is not).
    private var activeSince: Duration?
    private var lastMovementAt: Duration?
    /// The largest change seen since the last movement (for the stillness alert's confidence).
    private var quietPeak = 0.0
    private var stillnessRaised = false
    /// Recent changes, for the roll test (bounded to a few seconds): how much, and where.
    private var recentMovement: [(at: Duration, fraction: Double, places: [FrameAnalyzer.Place])] = []
    /// Recent frames' face findings (the baby's face, or nil), for the face alerts' confidence and the roll test.
    private var recentFaces: [(at: Duration, face: FaceBox?)] = []
    private var lastFaceAt: Duration?
    /// Where the face was last seen (fractions of the frame).
    private var lastFace: FaceBox?
    private var faceSeenWhileActive = false
    /// The widths of the baby's face lately (fractions of the frame), for telling an adult's face from it.
    private var babyFaceWidths: [Double] = []
    /// When an adult's face was last seen at the cot.
    private var attendedAt: Duration?
    private var faceLossRaised = false
    private var position = SleepPosition.unknown
    private var mutedUntil: [SafetyAlertKind: Duration] = [:]
    private var lastCryingAlertAt: Duration?
    private var sent: Status?
    private var sentAt: Duration?
    /// Since when monitoring has not been active (nil while it is), and whether the parent was told.
    private var notJudgingSince: Duration?
    private var toldNotJudging = false

    public init(settings: Settings = Settings()) {
        self.settings = settings
    }

    /// The status as it stands (whether or not it has been emitted yet).
    public var status: Status { currentStatus(at: lastFrameAt ?? .zero) }

    public mutating func handle(_ event: Event) -> [Action] {
        var actions: [Action] = []
        let now: Duration
        switch event {
        case .frame(let measurement, let faces, let at):
            now = at
            if cameraLost != nil || lastFrameAt.map({ at - $0 > settings.cameraTimeout }) == true {
                judgement = nil  // after a pause the picture is judged afresh
            }
            lastFrameAt = at
            cameraLost = nil
            faceDetector = faces != nil
            follow(measurement.judgement, at: now)
            refreshActivity(at: now)
            if activeSince != nil, unjudgeableSince == nil {
                observe(measurement, faces: faces, at: now, into: &actions)
            }
        case .cameraLost(let reason, let at):
            now = at
            cameraLost = reason
            refreshActivity(at: now)
        case .tick(let at):
            now = at
            refreshActivity(at: now)
            if activeSince != nil, unjudgeableSince == nil { judgeTime(at: now, into: &actions) }
        case .crying(let confidence, let detector, let at):
            now = at
            refreshActivity(at: now)
            let repeatDue = lastCryingAlertAt.map { now - $0 >= settings.cryingRepeat } ?? true
            if repeatDue, blockReason(for: .crying, at: now) == nil {
                lastCryingAlertAt = now
                actions.append(.alert(.crying, confidence: Self.clamp(confidence), detector: detector))
            }
        case .trigger(let kind, let at):
            now = at
            refreshActivity(at: now)
            if let reason = blockReason(for: kind, at: now) {
                actions.append(.notRaised(kind, reason: reason))
            } else {
                actions.append(.alert(kind, confidence: 1, detector: "trigger"))
            }
        case .mute(let kind, let duration, let at):
            now = at
            mutedUntil[kind] = at + duration
        case .settings(let new, let at):
            now = at
            let areaMoved = new.area != settings.area
            // Switched on or off: time not judged before counts no more towards the cannot-judge notice.
            if new.switchedOff != settings.switchedOff { notJudgingSince = nil }
            settings = new
            if areaMoved {
                // A new sleep area is a new picture: judged afresh from its first frame, with no dwell carried
                // over from the old one (it kept the setup check's placement failing for 10 s after a redraw).
                judgement = nil
                unjudgeableSince = nil
                judgeableSince = nil
                restartDetectors(at: at)
            }
            refreshActivity(at: now)
        }
        actions += emitStatus(at: now)
        actions += checkJudging(at: now)
        return actions
    }

    /// Tells once when monitoring has not judged for ``Settings/cannotJudgeNotice``, and when it judges again.
    private mutating func checkJudging(at now: Duration) -> [Action] {
        let (state, reason) = monitoring(at: now)
        guard state != .active else {
            notJudgingSince = nil
            defer { toldNotJudging = false }
            return toldNotJudging ? [.judgingAgain] : []
        }
        let since = notJudgingSince ?? now
        notJudgingSince = since
        guard !toldNotJudging, now - since >= settings.cannotJudgeNotice, settings.alertsEnabled,
            settings.alertsHeld == nil, !settings.switchedOff
        else { return [] }
        toldNotJudging = true
        return [.cannotJudge(reason: reason ?? state.rawValue, for: now - since)]
    }

    // MARK: - Activity

    private func monitoring(at now: Duration) -> (MonitoringState, String?) {
        if settings.switchedOff { return (.paused, Reason.switchedOff) }
        if let cameraLost { return (.paused, cameraLost) }
        guard let lastFrameAt else { return (.paused, Reason.waitingForCamera) }
        if now - lastFrameAt > settings.cameraTimeout { return (.paused, Reason.cameraDisconnected) }
        switch judgement {
        case .tooDark: return (.stale, Reason.tooDark)
        case .tooBright: return (.stale, Reason.tooBright)
        case .empty: return (.stale, Reason.emptyArea)
        case .judgeable, nil: return (.active, nil)
        }
    }

    /// The reasons a status gives for not judging (besides a lost camera's own words).
    public enum Reason {
        public static let switchedOff = "monitoring is turned off"
        public static let waitingForCamera = "waiting for the camera"
        public static let cameraDisconnected = "camera disconnected"
        public static let tooDark = "too dark to judge"
        public static let tooBright = "too bright to judge"
        public static let emptyArea = "nothing seen in the sleep area"
    }

    /// Moves the judgement shown towards the frame's own, `raw`, with the hysteresis of the settings.
    private mutating func follow(_ raw: FrameAnalyzer.Judgement, at now: Duration) {
        guard let shown = judgement else {
            judgement = raw
            unjudgeableSince = nil
            judgeableSince = nil
            return
        }
        if shown == .judgeable {
            guard raw != .judgeable else {
                if let since = unjudgeableSince {
                    // Frames are judgeable again before monitoring turned stale: the time not judged does not count.
                    let gap = now - since
                    lastFaceAt = lastFaceAt.map { $0 + gap }
                    lastMovementAt = lastMovementAt.map { $0 + gap }
                    activeSince = activeSince.map { $0 + gap }
                    unjudgeableSince = nil
                }
                return
            }
            let since = unjudgeableSince ?? now
            unjudgeableSince = since
            if now - since >= settings.staleAfter {
                judgement = raw
                unjudgeableSince = nil
            }
        } else if raw == .judgeable {
            let since = judgeableSince ?? now
            judgeableSince = since
            if now - since >= settings.resumeAfter {
                judgement = raw
                judgeableSince = nil
            }
        } else {
            judgement = raw  // still stale, maybe for another reason
            judgeableSince = nil
        }
    }

    /// Starts or stops the detectors as monitoring becomes active or not.
    private mutating func refreshActivity(at now: Duration) {
        let active = monitoring(at: now).0 == .active
        if active, activeSince == nil {
            restartDetectors(at: now)
            activeSince = now
        } else if !active, activeSince != nil {
            activeSince = nil
            position = .unknown
        }
    }

    /// Nothing judged before `now` counts any more.
    private mutating func restartDetectors(at now: Duration) {
        lastMovementAt = nil
        quietPeak = 0
        stillnessRaised = false
        recentMovement = []
        recentFaces = []
        lastFaceAt = nil
        lastFace = nil
        faceSeenWhileActive = false
        faceLossRaised = false
        attendedAt = nil
        position = .unknown
        if activeSince != nil { activeSince = now }
    }

    // MARK: - Frames

    private mutating func observe(
        _ measurement: FrameAnalyzer.Measurement, faces: [FaceBox]?, at now: Duration, into actions: inout [Action]
    ) {
        let fraction = measurement.changedFraction
        recentMovement.append((now, fraction, measurement.changedPlaces))
        recentMovement.removeAll { now - $0.at > settings.rollWindow * 3 }
        if fraction >= settings.movingFraction {
            lastMovementAt = now
            quietPeak = 0
            stillnessRaised = false
        } else {
            quietPeak = max(quietPeak, fraction)
        }
        if let faces {
            let inArea = faces.filter { settings.area.contains(x: $0.centerX, y: $0.centerY) }
            let adults = inArea.filter(isAdult)
            if !adults.isEmpty {
                // Someone leans in: their face is not the baby's, and the baby's hidden by them is not lost.
                attendedAt = now
                faceSeenWhileActive = false
                faceLossRaised = false
            }
            let face = inArea.first { !isAdult($0) }
            if let face {
                babyFaceWidths.append(face.width)
                if babyFaceWidths.count > 25 { babyFaceWidths.removeFirst() }
            }
            let seen = face != nil
            recentFaces.append((now, face))
            recentFaces.removeAll { now - $0.at > .seconds(15) }
            if let face {
                lastFaceAt = now
                lastFace = face
                faceSeenWhileActive = true
                faceLossRaised = false
                position = .onBack
            }
        }
        judgeTime(at: now, into: &actions)
    }

    /// Whether `face` is an adult's leaning in rather than the baby's: much wider than the baby's face lately, or,
    /// before that is known, wider than a baby's face could be in the sleep area.
    private func isAdult(_ face: FaceBox) -> Bool {
        if babyFaceWidths.count >= 3 {
            let usual = babyFaceWidths.sorted()[babyFaceWidths.count / 2]
            return face.width > settings.adultFaceRatio * usual
        }
        return face.width > settings.adultFaceFraction * settings.area.width
    }

    /// The alerts that time brings: a face lost too long, stillness too long.
    private mutating func judgeTime(at now: Duration, into actions: inout [Action]) {
        guard let activeSince else { return }
        let attended = attendedAt.map { now - $0 < settings.attendedGrace } ?? false
        let tracked = lastFaceAt.map { Self.seenRatio(recentFaces, before: $0, span: .seconds(10)) } ?? 0
        // How sure a loss is: a face tracked in most frames and then gone is a clear loss; one seen now and then
        // (a head turning, a detector unsure) is given longer.
        let lostLimit =
            0.4 + 0.6 * tracked >= settings.sureConfidence ? settings.faceLostLimit : settings.unsureLostLimit
        if faceDetector, faceSeenWhileActive, !faceLossRaised, !attended, let lastFaceAt,
            now - lastFaceAt >= lostLimit
        {
            faceLossRaised = true
            let window = (lastFaceAt - settings.rollWindow)...(lastFaceAt + settings.rollWindow)
            // A roll moves the body: a large change that reaches well beyond the face. Something put over the
            // face changes little besides it.
            let changes = recentMovement.filter { window.contains($0.at) }
            // Where the face was as the movement began: a face glimpsed while rolling has moved with the body.
            let anchor = recentFaces.first { $0.at >= window.lowerBound && $0.face != nil }?.face ?? lastFace
            let roll =
                changes.filter { change in
                    guard let anchor else { return true }
                    let away = change.places.filter { !Self.near($0, anchor) }.count
                    return away * 2 >= change.places.count
                }.map(\.fraction).max() ?? 0
            if roll >= settings.rollFraction {
                position = .onStomach
                raise(
                    .onStomach, confidence: 0.5 * tracked + 0.5 * min(1, roll / (2 * settings.rollFraction)),
                    detector: "face-lost-after-roll", at: now, into: &actions)
            } else {
                position = .unknown
                raise(.faceCovered, confidence: 0.4 + 0.6 * tracked, detector: "face-lost", at: now, into: &actions)
            }
        }
        let stillSince = lastMovementAt ?? activeSince
        if !stillnessRaised, now - stillSince >= settings.stillnessLimit {
            stillnessRaised = true
            // Near-movements during the quiet time make the judgement less sure.
            let confidence = 1 - 0.5 * min(1, quietPeak / settings.movingFraction)
            raise(.stillness, confidence: confidence, detector: "frame-difference", at: now, into: &actions)
        }
    }

    private func raise(
        _ kind: SafetyAlertKind, confidence: Double, detector: String, at now: Duration, into actions: inout [Action]
    ) {
        if blockReason(for: kind, at: now) == nil {
            actions.append(.alert(kind, confidence: Self.clamp(confidence), detector: detector))
        }
    }

    /// Why an alert of `kind` may not be raised now, or nil.
    private func blockReason(for kind: SafetyAlertKind, at now: Duration) -> String? {
        let (state, reason) = monitoring(at: now)
        if settings.switchedOff { return Reason.switchedOff }
        if state != .active { return "monitoring is \(state.rawValue)\(reason.map { ": \($0)" } ?? "")" }
        if !settings.alertsEnabled { return "safety alerts are turned off" }
        if let held = settings.alertsHeld { return held }
        if let until = mutedUntil[kind], now < until {
            let minutes = Int(((until - now) / .seconds(60)).rounded(.up))
            return "\(kind.rawValue) alerts are muted for \(minutes) more minute\(minutes == 1 ? "" : "s")"
        }
        return nil
    }

    // MARK: - Status

    private func currentStatus(at now: Duration) -> Status {
        let (state, reason) = monitoring(at: now)
        guard state == .active, let activeSince else { return Status(monitoring: state, reason: reason) }
        let movement: MovementState
        if let lastMovementAt, now - lastMovementAt < settings.stillAfter {
            movement = .moving
        } else if now - activeSince >= settings.stillAfter {
            movement = .still
        } else {
            movement = .unknown
        }
        var faceVisible: Bool?
        if faceDetector {
            faceVisible = lastFaceAt.map { now - $0 <= settings.faceGrace } ?? false
        }
        return Status(monitoring: .active, movement: movement, position: position, faceVisible: faceVisible)
    }

    private mutating func emitStatus(at now: Duration) -> [Action] {
        let status = currentStatus(at: now)
        guard status != sent else { return [] }
        if let sentAt, now - sentAt < settings.statusInterval { return [] }
        sent = status
        sentAt = now
        return [.status(status)]
    }

    // MARK: - Helpers

    private static func seenRatio(_ findings: [(at: Duration, face: FaceBox?)], before end: Duration, span: Duration)
        -> Double
    {
        let window = findings.filter { $0.at <= end && end - $0.at <= span }
        guard !window.isEmpty else { return 0 }
        return Double(window.filter { $0.face != nil }.count) / Double(window.count)
    }

    /// Whether `place` lies within the face's box grown to twice its size (around the same centre).
    private static func near(_ place: FrameAnalyzer.Place, _ face: FaceBox) -> Bool {
        abs(place.x - face.centerX) <= face.width && abs(place.y - face.centerY) <= face.height
    }

    private static func clamp(_ value: Double) -> Double {
        value.isNaN ? 0 : min(1, max(0, value))
    }
}

/// A face a detector found, as fractions of the frame.
public struct FaceBox: Sendable, Hashable {
    public var x: Double
    public var y: Double
    public var width: Double
    public var height: Double

    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public var centerX: Double { x + width / 2 }
    public var centerY: Double { y + height / 2 }
}
