public import CribCallProtocol

/// The final setup check (seed 003 §3.4): before monitoring starts, a few seconds of the real camera and microphone
/// are watched, and each of four checks passes or says what to change — the camera sends pictures, the light lets
/// the sleep area be judged, the sleep area holds something to judge, the room is quieter than the sound alert
/// threshold. "Start Monitoring" is allowed only when all four passed.
///
/// Pure: fed the monitor's status and sound level as they come, with times on any clock.
public struct SetupCheck: Sendable {
    public enum Item: String, Sendable, CaseIterable {
        case camera, light, placement, noise

        /// What the check looks at, for the person running it.
        public var label: String {
            switch self {
            case .camera: "Camera connected"
            case .light: "Lighting"
            case .placement: "Camera placement"
            case .noise: "Room noise"
            }
        }
    }

    public enum State: String, Sendable {
        case pending, checking, passed, failed
    }

    public struct Result: Sendable, Hashable {
        public var item: Item
        public var state: State
        /// What was found, or what to change.
        public var detail: String
    }

    /// How long the check watches.
    public static let duration: Duration = .seconds(4)

    private let start: Duration
    private let threshold: Int
    /// What this check looks at: all four with a camera, only the room's noise for an audio-only monitor.
    public let items: [Item]
    private var lastStatus: (monitoring: MonitoringState, reason: String?)?
    private var sawPicture = false
    private var loudest = 0
    private var heard = false

    /// - Parameters:
    ///   - start: When the check began.
    ///   - soundThreshold: The level (0…100) at which sound alerts start; the room must stay below it.
    ///   - items: What to check (default: all four); an audio-only monitor (no camera watched) checks `[.noise]`.
    public init(startingAt start: Duration, soundThreshold: Int, items: [Item] = Item.allCases) {
        self.start = start
        self.threshold = soundThreshold
        self.items = items.isEmpty ? Item.allCases : items
    }

    /// The safety status now (nil: no camera is watched at all).
    public mutating func observe(monitoring: MonitoringState?, reason: String?) {
        guard let monitoring else {
            lastStatus = nil
            return
        }
        lastStatus = (monitoring, reason)
        if monitoring != .paused { sawPicture = true }
    }

    /// The microphone's level now.
    public mutating func hear(level: Int) {
        heard = true
        loudest = max(loudest, level)
    }

    /// Progress 0…100, whether the check is over, and each item's state.
    public func report(at now: Duration) -> (progress: Int, done: Bool, ok: Bool, results: [Result]) {
        let elapsed = max(.zero, now - start)
        let done = elapsed >= Self.duration
        let progress = done ? 100 : min(99, Int((elapsed / Self.duration) * 100))
        let results = items.map { result($0, done: done, elapsed: elapsed) }
        return (progress, done, done && results.allSatisfy { $0.state == .passed }, results)
    }

    private func result(_ item: Item, done: Bool, elapsed: Duration) -> Result {
        // The items are checked one after another as the seconds pass (each needs what the one before found).
        let index = items.firstIndex(of: item) ?? 0
        let share = Self.duration / items.count
        if !done, elapsed < share * index { return Result(item: item, state: .pending, detail: "Waiting") }
        let verdict = judge(item)
        if !done, verdict.state == .failed || elapsed < share * (index + 1) {
            return Result(item: item, state: .checking, detail: "Checking…")
        }
        return verdict
    }

    private func judge(_ item: Item) -> Result {
        switch item {
        case .camera:
            guard let lastStatus else {
                return Result(
                    item: item, state: .failed,
                    detail: "This monitor watches no camera: start it with --safety and a camera.")
            }
            if lastStatus.monitoring == .paused || !sawPicture {
                return Result(
                    item: item, state: .failed,
                    detail: "No picture from the camera (\(lastStatus.reason ?? "camera disconnected")). "
                        + "Check that it is plugged in.")
            }
            return Result(item: item, state: .passed, detail: "The camera sends pictures.")
        case .light:
            switch lastStatus?.reason {
            case SafetyMonitor.Reason.tooDark?:
                return Result(
                    item: item, state: .failed, detail: "Too dark to see the sleep area. Add a soft night light.")
            case SafetyMonitor.Reason.tooBright?:
                return Result(
                    item: item, state: .failed,
                    detail: "Too bright to judge. Turn the camera away from windows and lamps.")
            default:
                guard let lastStatus, lastStatus.monitoring != .paused else {
                    return Result(item: item, state: .failed, detail: "No picture to judge the light by.")
                }
                return Result(item: item, state: .passed, detail: "The light is good enough to judge.")
            }
        case .placement:
            guard let lastStatus, lastStatus.monitoring != .paused else {
                return Result(item: item, state: .failed, detail: "No picture to judge the placement by.")
            }
            if lastStatus.reason == SafetyMonitor.Reason.emptyArea {
                return Result(
                    item: item, state: .failed,
                    detail: "Nothing is seen in the sleep area. Point the camera at the mattress and redraw the area.")
            }
            if lastStatus.monitoring != .active {
                return Result(item: item, state: .failed, detail: "The sleep area cannot be judged yet.")
            }
            return Result(item: item, state: .passed, detail: "The sleep area is in view.")
        case .noise:
            guard heard else {
                return Result(item: item, state: .failed, detail: "No sound from the microphone yet.")
            }
            if loudest >= threshold {
                return Result(
                    item: item, state: .failed,
                    detail: "The room is loud (level \(loudest); sound alerts start at \(threshold)). "
                        + "Turn down nearby sounds or raise the threshold.")
            }
            return Result(item: item, state: .passed, detail: "The room is quiet enough (level \(loudest)).")
        }
    }
}
