import ArgumentParser
import CribCallApp

/// `cribcall alert trigger KIND`: argument parsing only; the work is in CribCallApp.
struct AlertCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "alert",
        abstract: "Safety alerts of a running monitor (CribAlert).",
        subcommands: [Trigger.self, Act.self]
    )

    struct Trigger: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Raise a safety alert through the running monitor's real path (for trying things out).",
            discussion: """
                The monitor must run with --safety and the same --data-dir. Like a real one, the alert is refused \
                while monitoring is paused or cannot judge, while its kind is muted, with safetyAlerts=off, or (with \
                --web) before the first-launch setup is finished in the app.
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

    struct Act: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Act on a safety alert from this listener; every listener of the monitor hears it.",
            discussion: """
                checking: "I am checking"; okay: "Mark as okay"; mute: silence this kind of alert for everyone for \
                --minutes (default 5). The alert's id is in `cribcall listen --json` (alertId).
                """
        )

        @Argument(help: ArgumentHelp("What to do: \(AlertCommands.actionList).", valueName: "action"))
        var action: String

        @Argument(help: ArgumentHelp("The alert's id.", valueName: "alert-id"))
        var alertId: String

        @Option(help: "The monitor (id, id prefix or name); needed when several are paired.")
        var monitor: String?

        @Option(help: "For mute: how many minutes (1…120, default 5).")
        var minutes: Int?

        @OptionGroup var data: DataDirectoryOption

        @Flag(help: "Print the monitor's answer as JSON.")
        var json = false

        func run() async throws {
            try await reportingFailures("alert act") {
                print(
                    try await AlertCommands.act(
                        action, alertId: alertId, monitor: monitor, minutes: minutes, in: data.directory, json: json))
            }
        }
    }
}
