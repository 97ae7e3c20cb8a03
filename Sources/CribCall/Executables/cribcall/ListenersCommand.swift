import ArgumentParser
import CribCallApp

/// `cribcall listeners`: the listeners this monitor trusts.
struct ListenersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "listeners",
        abstract: "List or revoke the listeners paired with this monitor.",
        discussion: """
            Works while `cribcall monitor` runs with the same data directory: a revoked listener is disconnected \
            within a second.
            """,
        subcommands: [List.self, Revoke.self]
    )

    /// `cribcall listeners list`.
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the paired listeners.",
            discussion: """
                Text shows the certificate fingerprint shortened; --json prints one object per line with \
                "event":"listener" and the full fingerprint. Creates nothing when the data directory is empty.
                """
        )

        @OptionGroup var data: DataDirectoryOption

        @Flag(name: .long, help: "Print JSON lines instead of text.")
        var json = false

        func run() throws {
            let lines = try reportingFailures("listeners list") {
                try ListenersCommands.list(in: data.directory, json: json)
            }
            for line in lines { print(line) }
        }
    }

    /// `cribcall listeners revoke ID`.
    struct Revoke: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Unpair a listener; a running monitor disconnects it within a second.",
            discussion:
                "ID is a listenerId from `cribcall listeners list`, or a unique prefix of at least 4 characters."
        )

        @Argument(help: "The listener's id, or a unique prefix of it (at least 4 characters).")
        var id: String

        @OptionGroup var data: DataDirectoryOption

        func run() throws {
            print(try reportingFailures("listeners revoke") { try ListenersCommands.revoke(id, in: data.directory) })
        }
    }
}
