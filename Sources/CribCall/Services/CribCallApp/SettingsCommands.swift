import CanonicalJSON
import CribCallProtocol
public import CribCallRuntime
import CribCallStore
import Foundation

/// `cribcall settings show|set` and `cribcall pairing unlock`: the monitor's stored settings and pairing state.
public enum SettingsCommands {
    /// A key of `settings set`, named as in `settings show --json`.
    enum Key: String, CaseIterable {
        case monitoring, name, threshold, minDurationMs, cooldownSec, autoStream, autoStreamSec
        case safetyAlerts, sleepArea, stillnessMinutes, crySensitivity
    }

    /// The keys `settings set` accepts, for help texts.
    public static var keyList: String { Key.allCases.map(\.rawValue).joined(separator: ", ") }
    /// The values of `autoStream`, for help texts.
    public static var autoStreamValues: String { AutoStreamMode.allCases.map(\.rawValue).joined(separator: ", ") }
    /// How many failed PIN sessions in a row lock PIN pairing.
    public static var pinLockThreshold: Int { PINPairingMonitor.lockThreshold }

    /// The settings (defaults when none are stored; creates nothing), as text or one JSON object with
    /// `"event":"settings"` and the keys accepted by `settings set`.
    public static func show(in data: CribCallDataDirectory, json: Bool) throws -> String {
        let settings = try data.existingDatabase()?.monitorSettings() ?? MonitorSettings.defaults
        return json ? jsonObject(settings).canonicalString : text(settings)
    }

    /// Applies `KEY=VALUE` assignments; nothing is written unless every one is valid. Returns the new settings as
    /// text.
    public static func set(_ assignments: [String], in data: CribCallDataDirectory) throws -> String {
        guard !assignments.isEmpty else {
            throw CommandFailure.usage("give at least one KEY=VALUE; keys: \(keyList)")
        }
        // Parse everything before touching the database, so a typo writes nothing.
        let changes = try assignments.map(parse)
        var seen: [Key] = []
        for (key, _) in changes {
            guard !seen.contains(key) else { throw CommandFailure("\(key.rawValue) is given more than once") }
            seen.append(key)
        }
        // Every field's range is independent of the others, so checking the changes against the defaults refuses
        // bad input before the database (and maybe the directory) is created.
        var probe = MonitorSettings.defaults
        for (_, apply) in changes { apply(&probe) }
        do {
            try probe.validate()
        } catch {
            throw CommandFailure("\(error); nothing was changed")
        }
        let database = try data.databaseCreatingIfNeeded()
        let settings: MonitorSettings
        do {
            settings = try database.updateMonitorSettings { settings in
                for (_, apply) in changes { apply(&settings) }
            }
        } catch let error as CribCallStoreError {
            // The store's validation message names the field and its allowed range; nothing was stored.
            throw CommandFailure("\(error); nothing was changed")
        }
        return text(settings)
    }

    /// Re-enables PIN pairing after it locked itself (resets the failed-attempt counter). Returns what to tell.
    public static func unlockPairing(in data: CribCallDataDirectory) throws -> String {
        let database = try data.databaseCreatingIfNeeded()
        let failures = try database.pinPairingFailures()
        try database.setPinPairingFailures(0)
        if failures >= PINPairingMonitor.lockThreshold {
            return "PIN pairing was locked after \(failures) failed attempts; it is unlocked now."
        }
        return "PIN pairing was not locked (\(failures) failed attempts); the counter is reset to 0."
    }

    /// Parses `KEY=VALUE` into the change it makes; ranges are checked later, all at once.
    static func parse(_ assignment: String) throws -> (Key, (inout MonitorSettings) -> Void) {
        guard let equals = assignment.firstIndex(of: "=") else {
            throw CommandFailure("expected KEY=VALUE, got \(String(reflecting: assignment)); keys: \(keyList)")
        }
        let name = String(assignment[..<equals])
        let value = String(assignment[assignment.index(after: equals)...])
        guard let key = Key(rawValue: name) else {
            throw CommandFailure("unknown setting \(String(reflecting: name)); valid keys: \(keyList)")
        }
        func integer() throws -> Int {
            guard let number = Int(value) else {
                throw CommandFailure("\(name) must be an integer (got \(String(reflecting: value)))")
            }
            return number
        }
        func onOff() throws -> Bool {
            guard let enabled = ["on": true, "off": false, "true": true, "false": false][value] else {
                throw CommandFailure("\(name) must be on or off (got \(String(reflecting: value)))")
            }
            return enabled
        }
        switch key {
        case .name:
            return (key, { $0.monitorName = value })
        case .threshold:
            let number = try integer()
            return (key, { $0.threshold = number })
        case .minDurationMs:
            let number = try integer()
            return (key, { $0.minDurationMs = number })
        case .cooldownSec:
            let number = try integer()
            return (key, { $0.cooldownSec = number })
        case .autoStream:
            guard let mode = AutoStreamMode(rawValue: value) else {
                throw CommandFailure(
                    "autoStream must be one of \(autoStreamValues) (got \(String(reflecting: value)))")
            }
            return (key, { $0.autoStream = mode })
        case .autoStreamSec:
            let number = try integer()
            return (key, { $0.autoStreamSec = number })
        case .monitoring:
            let enabled = try onOff()
            return (key, { $0.monitoring = enabled })
        case .safetyAlerts:
            let enabled = try onOff()
            return (key, { $0.safetyAlerts = enabled })
        case .sleepArea:
            return (key, { $0.sleepArea = value })
        case .stillnessMinutes:
            let number = try integer()
            return (key, { $0.stillnessMinutes = number })
        case .crySensitivity:
            return (key, { $0.crySensitivity = value })
        }
    }

    static func jsonObject(_ settings: MonitorSettings) -> JSONValue {
        .object([
            "event": "settings",
            "monitoring": .bool(settings.monitoring),
            "name": .string(settings.monitorName),
            "threshold": .number(Double(settings.threshold)),
            "minDurationMs": .number(Double(settings.minDurationMs)),
            "cooldownSec": .number(Double(settings.cooldownSec)),
            "autoStream": .string(settings.autoStream.rawValue),
            "autoStreamSec": .number(Double(settings.autoStreamSec)),
            "safetyAlerts": .bool(settings.safetyAlerts),
            "sleepArea": .string(settings.sleepArea),
            "stillnessMinutes": .number(Double(settings.stillnessMinutes)),
            "crySensitivity": .string(settings.crySensitivity),
        ])
    }

    static func text(_ settings: MonitorSettings) -> String {
        """
        monitoring:       \(settings.monitoring ? "on" : "off")
        name:             \(TextTable.printable(settings.monitorName))
        threshold:        \(settings.threshold)
        minDurationMs:    \(settings.minDurationMs)
        cooldownSec:      \(settings.cooldownSec)
        autoStream:       \(settings.autoStream.rawValue)
        autoStreamSec:    \(settings.autoStreamSec)
        safetyAlerts:     \(settings.safetyAlerts ? "on" : "off")
        sleepArea:        \(settings.sleepArea)
        stillnessMinutes: \(settings.stillnessMinutes)
        crySensitivity:   \(settings.crySensitivity)
        """
    }
}
