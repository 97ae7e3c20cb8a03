import Foundation
import GRDB

/// The app for parents' own preferences (CribCallWeb; seed 003 phases 2, 3, 8): whether the safety disclaimer was
/// accepted and setup finished, the baby's profile, and how alerts sound. Nothing here changes detection: the
/// profile is for personal words only.
public struct AppPreferences: Sendable, Hashable, Codable {
    /// "I understand this is a safety aid, not a medical device." was checked.
    public var disclaimerAccepted = false
    /// The final setup check passed and monitoring was started from the app.
    public var setupComplete = false
    /// What the family calls the baby (1–40 characters once set; empty before setup).
    public var babyName = ""
    /// Where the baby sleeps (optional, up to 40 characters).
    public var sleepLocation = ""
    /// `calm-chime` (recommended), `soft-melody` or `clear-pulse`.
    public var alertSound = "calm-chime"
    /// Alert volume, 0…100 %.
    public var volume = 75
    /// "Override Silent Mode" (recommended): the app's alarms ring again every 15 s until answered and their
    /// notifications stay on screen. (A web page cannot switch off a device's own silent mode; the screen says so.)
    public var overrideSilentMode = true
    /// `heartbeat` (recommended), `sos` or `continuous`.
    public var vibration = "heartbeat"
    /// System notifications for alerts (seed 000 FR7.2, "enable/disable notifications"): the app's notification
    /// while its page is behind another, and `cribcall listen`'s desktop notification. The alarm's sound and the
    /// full-screen alert are not affected.
    public var notifications = true

    public init() {}

    public static let alertSounds = ["calm-chime", "soft-melody", "clear-pulse"]
    public static let vibrations = ["heartbeat", "sos", "continuous"]
    public static let nameLengthRange = 1...40

    /// Reads what is stored, fields missing (an older version) taking their defaults.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = AppPreferences()
        disclaimerAccepted =
            try container.decodeIfPresent(Bool.self, forKey: .disclaimerAccepted) ?? defaults.disclaimerAccepted
        setupComplete = try container.decodeIfPresent(Bool.self, forKey: .setupComplete) ?? defaults.setupComplete
        babyName = try container.decodeIfPresent(String.self, forKey: .babyName) ?? defaults.babyName
        sleepLocation = try container.decodeIfPresent(String.self, forKey: .sleepLocation) ?? defaults.sleepLocation
        alertSound = try container.decodeIfPresent(String.self, forKey: .alertSound) ?? defaults.alertSound
        volume = try container.decodeIfPresent(Int.self, forKey: .volume) ?? defaults.volume
        overrideSilentMode =
            try container.decodeIfPresent(Bool.self, forKey: .overrideSilentMode) ?? defaults.overrideSilentMode
        vibration = try container.decodeIfPresent(String.self, forKey: .vibration) ?? defaults.vibration
        notifications = try container.decodeIfPresent(Bool.self, forKey: .notifications) ?? defaults.notifications
    }

    /// Checks every field.
    ///
    /// - Throws: ``CribCallStoreError/invalidSetting(field:message:)`` for the first invalid field, saying what is
    ///   allowed.
    public func validate() throws(CribCallStoreError) {
        let name = babyName.trimmingCharacters(in: .whitespacesAndNewlines)
        if setupComplete || !babyName.isEmpty, !Self.nameLengthRange.contains(name.count) {
            throw .invalidSetting(
                field: "babyName", message: "the baby's name must be 1 to 40 characters (got \(name.count))")
        }
        if sleepLocation.count > 40 {
            throw .invalidSetting(
                field: "sleepLocation", message: "the sleep location must be at most 40 characters")
        }
        if babyName.unicodeScalars.contains(where: Self.isControl)
            || sleepLocation.unicodeScalars.contains(where: Self.isControl)
        {
            throw .invalidSetting(field: "babyName", message: "names cannot contain control characters")
        }
        guard Self.alertSounds.contains(alertSound) else {
            throw .invalidSetting(
                field: "alertSound", message: "alertSound must be calm-chime, soft-melody or clear-pulse")
        }
        guard (0...100).contains(volume) else {
            throw .invalidSetting(field: "volume", message: "volume must be in 0...100 % (got \(volume))")
        }
        guard Self.vibrations.contains(vibration) else {
            throw .invalidSetting(field: "vibration", message: "vibration must be heartbeat, sos or continuous")
        }
    }

    /// Control characters and bidirectional overrides (a name is shown on screens and terminals).
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.generalCategory == .control || (0x202A...0x202E).contains(scalar.value)
            || (0x2066...0x2069).contains(scalar.value)
    }
}

extension CribCallDatabase {
    private static let appPreferencesKey = "appPreferences"

    /// The app's preferences (defaults when never stored).
    /// - Throws: ``CribCallStoreError/corruptSetting(key:value:)`` when the stored value is unreadable.
    public func appPreferences() throws -> AppPreferences {
        try writer.read { db in try Self.loadAppPreferences(db) }
    }

    /// Changes the app's preferences atomically: reads, applies `change`, validates, stores.
    /// - Throws: ``CribCallStoreError/invalidSetting(field:message:)`` (nothing stored) for an invalid field.
    @discardableResult
    public func updateAppPreferences(_ change: (inout AppPreferences) throws -> Void) throws -> AppPreferences {
        try writer.write { db in
            var preferences = try Self.loadAppPreferences(db)
            try change(&preferences)
            try preferences.validate()
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            let value = String(decoding: try encoder.encode(preferences), as: UTF8.self)
            try SettingRecord(key: Self.appPreferencesKey, value: value).save(db)
            return preferences
        }
    }

    private static func loadAppPreferences(_ db: Database) throws -> AppPreferences {
        guard let stored = try SettingRecord.fetchOne(db, key: appPreferencesKey) else { return AppPreferences() }
        do {
            return try JSONDecoder().decode(AppPreferences.self, from: Data(stored.value.utf8))
        } catch {
            throw CribCallStoreError.corruptSetting(key: appPreferencesKey, value: String(stored.value.prefix(80)))
        }
    }
}
