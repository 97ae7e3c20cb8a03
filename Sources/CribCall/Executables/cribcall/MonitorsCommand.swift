import ArgumentParser
import CribCallApp

/// `cribcall monitors`: the monitors this listener trusts.
struct MonitorsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monitors",
        abstract: "List or forget the monitors this listener is paired with.",
        subcommands: [List.self, Forget.self]
    )

    /// `cribcall monitors list`.
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the paired monitors.",
            discussion: """
                --json prints one object per line with "event":"monitor", the full fingerprint, the last known \
                address and the last alert received (seq).
                """
        )

        @OptionGroup var data: DataDirectoryOption

        @Flag(name: .long, help: "Print JSON lines instead of text.")
        var json = false

        func run() throws {
            let lines = try reportingFailures("monitors list") {
                try MonitorsCommands.list(in: data.directory, json: json)
            }
            for line in lines { print(line) }
        }
    }

    /// `cribcall monitors forget ID`.
    struct Forget: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Unpair a monitor: tell it (UNPAIR) when it can be reached, and forget it here either way.",
            discussion:
                "ID is a monitorId from `cribcall monitors list`, a unique prefix of at least 4 characters, or its name."
        )

        @Argument(help: "The monitor's id, a unique prefix of it (at least 4 characters), or its name.")
        var id: String

        @OptionGroup var data: DataDirectoryOption

        func run() async throws {
            print(
                try await reportingFailures("monitors forget") {
                    try await MonitorsCommands.forget(id, in: data.directory)
                })
        }
    }
}
