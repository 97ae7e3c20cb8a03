import ArgumentParser
import CribCallApp

/// `cribcall alert trigger KIND`: argument parsing only; the work is in CribCallApp.
struct AlertCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "alert",
        abstract: "Safety alerts of a running monitor (CribAlert).",
        subcommands: [Trigger.self]
    )

    struct Trigger: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Raise a safety alert through the running monitor's real path (for trying things out).",
            discussion: """
                The monitor must run with --safety and the same --data-dir. Like a real one, the alert is refused \
                while monitoring is paused or cannot judge, while its kind is muted, or with safetyAlerts=off.
                """
        )

        @Argument(help: ArgumentHelp("The alert: \(AlertCommands.kindList).", valueName: "kind"))
        var kind: String

        @OptionGroup var data: DataDirectoryOption

        @Flag(help: "Print the monitor's answer as JSON.")
        var json = false

        func run() async throws {
            try await reportingFailures("alert trigger") {
                print(try await AlertCommands.trigger(kind, in: data.directory, json: json))
            }
        }
    }
}
