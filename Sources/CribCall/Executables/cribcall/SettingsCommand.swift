import ArgumentParser
import CribCallApp

/// `cribcall settings`: the monitor's stored settings (name, detection, automatic streaming).
struct SettingsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settings",
        abstract: "Show or change the monitor settings stored in the data directory.",
        discussion: "Keys: \(SettingsCommands.keyList).",
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
            print(try reportingFailures("settings show") { try SettingsCommands.show(in: data.directory, json: json) })
        }
    }

    /// `cribcall settings set KEY=VALUE...`.
    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change monitor settings; nothing is written unless every KEY=VALUE is valid.",
            discussion: """
                Keys: \(SettingsCommands.keyList). autoStream is one of \(SettingsCommands.autoStreamValues). \
                Example: cribcall settings set threshold=55 autoStream=audio autoStreamSec=60
                """
        )

        @Argument(help: "One or more KEY=VALUE pairs.")
        var assignments: [String]

        @OptionGroup var data: DataDirectoryOption

        func validate() throws {
            guard !assignments.isEmpty else {
                throw ValidationError("give at least one KEY=VALUE; keys: \(SettingsCommands.keyList)")
            }
        }

        func run() throws {
            print(try reportingFailures("settings set") { try SettingsCommands.set(assignments, in: data.directory) })
        }
    }
}
