import ArgumentParser
import CanonicalJSON
import CribCallStore
import Foundation

/// `cribcall settings`: the monitor's stored settings (name, detection, automatic streaming).
struct SettingsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settings",
        abstract: "Show or change the monitor settings stored in the data directory.",
        discussion: "Keys: \(SettingsCommand.keyList).",
        subcommands: [Show.self, Set.self]
    )

    /// `cribcall settings show`.
    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the monitor settings (defaults when none are stored; creates nothing).",
            discussion: #"--json prints one object with "event":"settings" and the keys accepted by `settings set`."#
        )

        @OptionGroup var data: DataDirectoryOption

        @Flag(name: .long, help: "Print one JSON object instead of text.")
        var json = false

        func run() throws {
            try reportingFailures("settings show") {
                let settings = try data.existingDatabase()?.monitorSettings() ?? MonitorSettings.defaults
                print(json ? SettingsCommand.jsonObject(settings).canonicalString : SettingsCommand.text(settings))
            }
        }
    }

    /// `cribcall settings set KEY=VALUE...`.
    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change monitor settings; nothing is written unless every KEY=VALUE is valid.",
            discussion: """
                Keys: \(SettingsCommand.keyList). autoStream is one of \(SettingsCommand.autoStreamValues). \
                Example: cribcall settings set threshold=55 autoStream=audio autoStreamSec=60
                """
        )

        @Argument(help: "One or more KEY=VALUE pairs.")
        var assignments: [String]

        @OptionGroup var data: DataDirectoryOption

        func validate() throws {
            guard !assignments.isEmpty else {
                throw ValidationError("give at least one KEY=VALUE; keys: \(SettingsCommand.keyList)")
            }
        }

        func run() throws {
            try reportingFailures("settings set") {
                // Parse everything before touching the database, so a typo writes nothing.
                let changes = try assignments.map(SettingsCommand.parse)
                var seen: [SettingsCommand.Key] = []
                for (key, _) in changes {
                    guard !seen.contains(key) else { throw CommandFailure("\(key.rawValue) is given more than once") }
                    seen.append(key)
                }
                // Every field's range is independent of the others, so checking the changes against the defaults
                // refuses bad input before the database (and maybe the directory) is created.
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
                print(SettingsCommand.text(settings))
            }
        }
    }

    /// A key of `settings set`, named as in `settings show --json`.
    enum Key: String, CaseIterable {
        case name, threshold, minDurationMs, cooldownSec, autoStream, autoStreamSec
    }

    static var keyList: String { Key.allCases.map(\.rawValue).joined(separator: ", ") }
    static var autoStreamValues: String { AutoStreamMode.allCases.map(\.rawValue).joined(separator: ", ") }

    /// Parses `KEY=VALUE` into the change it makes; ranges are checked later by the store, all at once.
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
        }
    }

    static func jsonObject(_ settings: MonitorSettings) -> JSONValue {
        .object([
            "event": "settings",
            "name": .string(settings.monitorName),
            "threshold": .number(Double(settings.threshold)),
            "minDurationMs": .number(Double(settings.minDurationMs)),
            "cooldownSec": .number(Double(settings.cooldownSec)),
            "autoStream": .string(settings.autoStream.rawValue),
            "autoStreamSec": .number(Double(settings.autoStreamSec)),
        ])
    }

    static func text(_ settings: MonitorSettings) -> String {
        """
        name:          \(ListenersCommand.printable(settings.monitorName))
        threshold:     \(settings.threshold)
        minDurationMs: \(settings.minDurationMs)
        cooldownSec:   \(settings.cooldownSec)
        autoStream:    \(settings.autoStream.rawValue)
        autoStreamSec: \(settings.autoStreamSec)
        """
    }
}
