import ArgumentParser
import CribCallApp

/// `cribcall open`: argument parsing only; the work is in CribCallApp.
struct OpenAppCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "open",
        abstract: "Open the app for parents of the monitor running with --web (in its own window).",
        discussion: """
            Uses Chromium's app window where installed, else the default browser. The address holds a secret that \
            changes every run; it is kept in the data directory (app-url, readable only by you).
            """
    )

    @OptionGroup var data: DataDirectoryOption

    @Flag(help: "Print the app's address instead of opening it.")
    var print = false

    func run() async throws {
        try await reportingFailures("open") {
            if let address = try OpenCommand.run(in: data.directory, print: print) { Swift.print(address) }
        }
    }
}
