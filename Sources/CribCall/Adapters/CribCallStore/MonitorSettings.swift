import Foundation
import SafetyDetection
public import SoundDetection

/// The monitor's user-editable settings, stored in the `setting` table one key per field.
///
/// Keys that were never written read as the defaults in ``defaults``, so changing a default in code changes it for
/// every monitor that never edited that field.
public struct MonitorSettings: Sendable, Hashable, Codable {
    /// Allowed values of ``autoStreamSec``.
    public static let autoStreamSecRange: ClosedRange<Int> = 5...600
    /// Allowed values of ``stillnessMinutes``.
    public static let stillnessMinutesRange: ClosedRange<Int> = 1...240
    /// Allowed values of ``crySensitivity``.
    public static let crySensitivities = ["low", "medium", "high"]
    /// Allowed lengths of ``monitorName`` in characters (after trimming spaces).
    public static let monitorNameLengthRange: ClosedRange<Int> = 1...64

    /// The values used for fields that were never stored.
    public static let defaults = MonitorSettings(
        monitorName: "CribCall monitor",
        threshold: 60,
        minDurationMs: 600,
        cooldownSec: 10,
        autoStream: .none,
        autoStreamSec: 30
    )

    /// The name announced to listeners.
    public var monitorName: String
    /// Level (0...100) a frame must reach to count as loud.
    public var threshold: Int
    /// How long the loud streak must last before an event fires, 20...60 000 ms.
    public var minDurationMs: Int
    /// Minimum distance between two events, 0...3600 s.
    public var cooldownSec: Int
    /// What to stream automatically on a noise event.
    public var autoStream: AutoStreamMode
    /// How long an automatic stream lasts, 5...600 s.
    public var autoStreamSec: Int
    /// Whether safety alerts (CribAlert) are raised; the status is reported either way.
    public var safetyAlerts: Bool
    /// The sleep area the safety detectors look at, `x,y,w,h` as fractions of the frame.
    public var sleepArea: String
    /// Minutes without movement before an unusual-stillness alert, 1...240.
    public var stillnessMinutes: Int
    /// How readily crying is heard: `low`, `medium` or `high`.
    public var crySensitivity: String
    /// Whether the monitor watches over the room (Monitor Home's Start/Stop monitoring). Off: no noise or safety
    /// alert is raised and no stream is started until it is on again; paired listeners are told either way.
    public var monitoring: Bool

    /// Creates settings without validating them; see ``validate()``.
    public init(
        monitorName: String,
        threshold: Int,
        minDurationMs: Int,
        cooldownSec: Int,
        autoStream: AutoStreamMode,
        autoStreamSec: Int,
        safetyAlerts: Bool = true,
        sleepArea: String = "0,0,1,1",
        stillnessMinutes: Int = 20,
        crySensitivity: String = "medium",
        monitoring: Bool = true
    ) {
        self.monitorName = monitorName
        self.threshold = threshold
        self.minDurationMs = minDurationMs
        self.cooldownSec = cooldownSec
        self.autoStream = autoStream
        self.autoStreamSec = autoStreamSec
        self.safetyAlerts = safetyAlerts
        self.sleepArea = sleepArea
        self.stillnessMinutes = stillnessMinutes
        self.crySensitivity = crySensitivity
        self.monitoring = monitoring
    }

    /// The sound detector parameters these settings describe.
    ///
    /// Stored settings are always valid; values of a hand-built, out-of-range instance are clamped.
    public var detectorConfiguration: SoundDetectorConfiguration {
        var configuration = SoundDetectorConfiguration.default
        configuration.threshold = threshold
        configuration.minDurationMs = minDurationMs
        configuration.cooldownSeconds = cooldownSec
        return configuration.clamped()
    }

    /// Checks every field against its allowed range.
    ///
    /// - Throws: ``CribCallStoreError/invalidSetting(field:message:)`` for the first invalid field, with a message
    ///   such as `threshold must be in 0...100 (got 101)`.
    public func validate() throws(CribCallStoreError) {
        let nameLength = monitorName.trimmingCharacters(in: .whitespacesAndNewlines).count
        guard Self.monitorNameLengthRange.contains(nameLength) else {
            let range = Self.monitorNameLengthRange
            throw .invalidSetting(
                field: "monitorName",
                message: "monitorName must be \(range.lowerBound)...\(range.upperBound) characters (got \(nameLength))"
            )
        }
        try Self.check("threshold", threshold, SoundDetectorConfiguration.thresholdRange)
        try Self.check("minDurationMs", minDurationMs, SoundDetectorConfiguration.minDurationMsRange, unit: "ms")
        try Self.check("cooldownSec", cooldownSec, SoundDetectorConfiguration.cooldownSecondsRange, unit: "s")
        try Self.check("autoStreamSec", autoStreamSec, Self.autoStreamSecRange, unit: "s")
        do {
            _ = try SleepArea(parsing: sleepArea)
        } catch {
            throw .invalidSetting(field: "sleepArea", message: "sleepArea: \(error.message)")
        }
        try Self.check("stillnessMinutes", stillnessMinutes, Self.stillnessMinutesRange, unit: "min")
        guard Self.crySensitivities.contains(crySensitivity) else {
            throw .invalidSetting(
                field: "crySensitivity",
                message: "crySensitivity must be low, medium or high (got \(crySensitivity.prefix(20)))")
        }
    }

    private static func check(
        _ field: String,
        _ value: Int,
        _ range: ClosedRange<Int>,
        unit: String = ""
    ) throws(CribCallStoreError) {
        guard !range.contains(value) else { return }
        let suffix = unit.isEmpty ? "" : " \(unit)"
        throw .invalidSetting(
            field: field,
            message: "\(field) must be in \(range.lowerBound)...\(range.upperBound)\(suffix) (got \(value))"
        )
    }
}
