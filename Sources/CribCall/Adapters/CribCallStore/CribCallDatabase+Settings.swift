import GRDB

extension CribCallDatabase {
    /// Keys of the `setting` table.
    enum SettingKey {
        static let monitorName = "monitorName"
        static let threshold = "threshold"
        static let minDurationMs = "minDurationMs"
        static let cooldownSec = "cooldownSec"
        static let autoStream = "autoStream"
        static let autoStreamSec = "autoStreamSec"
        static let safetyAlerts = "safetyAlerts"
        static let sleepArea = "sleepArea"
        static let stillnessMinutes = "stillnessMinutes"
        static let crySensitivity = "crySensitivity"
        static let monitoring = "monitoring"
        static let pinPairingFailures = "pinPairingFailures"
    }

    /// The monitor settings; fields never stored read as ``MonitorSettings/defaults``.
    ///
    /// - Throws: ``CribCallStoreError/corruptSetting(key:value:)`` if a stored value is unreadable or out of range.
    public func monitorSettings() throws -> MonitorSettings {
        try writer.read { db in try Self.loadSettings(db) }
    }

    /// Changes the monitor settings atomically: reads them, applies `change`, validates, and stores the fields that
    /// differ, all in one transaction.
    ///
    /// - Returns: The new settings.
    /// - Throws: ``CribCallStoreError/invalidSetting(field:message:)`` (nothing is stored) when a field is out of
    ///   range; the message names the allowed range, e.g. `autoStreamSec must be in 5...600 s (got 2)`.
    @discardableResult
    public func updateMonitorSettings(_ change: (inout MonitorSettings) throws -> Void) throws -> MonitorSettings {
        try writer.write { db in
            let old = try Self.loadSettings(db)
            var new = old
            try change(&new)
            try new.validate()
            let fields: [(String, String, String)] = [
                (SettingKey.monitorName, old.monitorName, new.monitorName),
                (SettingKey.threshold, String(old.threshold), String(new.threshold)),
                (SettingKey.minDurationMs, String(old.minDurationMs), String(new.minDurationMs)),
                (SettingKey.cooldownSec, String(old.cooldownSec), String(new.cooldownSec)),
                (SettingKey.autoStream, old.autoStream.rawValue, new.autoStream.rawValue),
                (SettingKey.autoStreamSec, String(old.autoStreamSec), String(new.autoStreamSec)),
                (SettingKey.safetyAlerts, String(old.safetyAlerts), String(new.safetyAlerts)),
                (SettingKey.sleepArea, old.sleepArea, new.sleepArea),
                (SettingKey.stillnessMinutes, String(old.stillnessMinutes), String(new.stillnessMinutes)),
                (SettingKey.crySensitivity, old.crySensitivity, new.crySensitivity),
                (SettingKey.monitoring, String(old.monitoring), String(new.monitoring)),
            ]
            for (key, oldValue, newValue) in fields where oldValue != newValue {
                try SettingRecord(key: key, value: newValue).save(db)
            }
            return new
        }
    }

    /// Failed PIN pairing sessions in a row (PROTOCOL.md §6: PIN pairing locks after 10); survives restarts.
    public func pinPairingFailures() throws -> Int {
        try writer.read { db in try Self.loadPinPairingFailures(db) }
    }

    /// Sets the PIN-failure counter, e.g. to 0 after a successful pairing or when the user unlocks PIN pairing.
    ///
    /// - Throws: ``CribCallStoreError/invalidSetting(field:message:)`` if `count` is negative.
    public func setPinPairingFailures(_ count: Int) throws {
        guard count >= 0 else {
            throw CribCallStoreError.invalidSetting(
                field: SettingKey.pinPairingFailures,
                message: "pinPairingFailures must be >= 0 (got \(count))"
            )
        }
        try writer.write { db in
            try SettingRecord(key: SettingKey.pinPairingFailures, value: String(count)).save(db)
        }
    }

    /// Adds one failed PIN session to the counter atomically (safe against another process doing the same).
    ///
    /// - Returns: The new count.
    @discardableResult
    public func recordPinPairingFailure() throws -> Int {
        try writer.write { db in
            let count = try Self.loadPinPairingFailures(db) + 1
            try SettingRecord(key: SettingKey.pinPairingFailures, value: String(count)).save(db)
            return count
        }
    }

    private static func loadPinPairingFailures(_ db: Database) throws -> Int {
        guard let record = try SettingRecord.fetchOne(db, key: SettingKey.pinPairingFailures) else { return 0 }
        guard let count = Int(record.value), count >= 0 else {
            throw CribCallStoreError.corruptSetting(key: record.key, value: record.value)
        }
        return count
    }

    private static func loadSettings(_ db: Database) throws -> MonitorSettings {
        var stored: [String: String] = [:]
        for record in try SettingRecord.fetchAll(db) {
            stored[record.key] = record.value
        }
        func integer(_ key: String, _ fallback: Int) throws -> Int {
            guard let text = stored[key] else { return fallback }
            guard let value = Int(text) else { throw CribCallStoreError.corruptSetting(key: key, value: text) }
            return value
        }
        func boolean(_ key: String, _ fallback: Bool) throws -> Bool {
            guard let text = stored[key] else { return fallback }
            guard let value = Bool(text) else { throw CribCallStoreError.corruptSetting(key: key, value: text) }
            return value
        }
        let defaults = MonitorSettings.defaults
        var autoStream = defaults.autoStream
        if let text = stored[SettingKey.autoStream] {
            guard let mode = AutoStreamMode(rawValue: text) else {
                throw CribCallStoreError.corruptSetting(key: SettingKey.autoStream, value: text)
            }
            autoStream = mode
        }
        let settings = MonitorSettings(
            monitorName: stored[SettingKey.monitorName] ?? defaults.monitorName,
            threshold: try integer(SettingKey.threshold, defaults.threshold),
            minDurationMs: try integer(SettingKey.minDurationMs, defaults.minDurationMs),
            cooldownSec: try integer(SettingKey.cooldownSec, defaults.cooldownSec),
            autoStream: autoStream,
            autoStreamSec: try integer(SettingKey.autoStreamSec, defaults.autoStreamSec),
            safetyAlerts: try boolean(SettingKey.safetyAlerts, defaults.safetyAlerts),
            sleepArea: stored[SettingKey.sleepArea] ?? defaults.sleepArea,
            stillnessMinutes: try integer(SettingKey.stillnessMinutes, defaults.stillnessMinutes),
            crySensitivity: stored[SettingKey.crySensitivity] ?? defaults.crySensitivity,
            monitoring: try boolean(SettingKey.monitoring, defaults.monitoring)
        )
        do {
            try settings.validate()
        } catch {
            guard case .invalidSetting(let field, _) = error else { throw error }
            throw CribCallStoreError.corruptSetting(key: field, value: stored[field] ?? "")
        }
        return settings
    }
}
