import ArgumentParser
import CribCallApp

/// `cribcall scan`: the monitors announced on the LAN, marked paired or not.
struct ScanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "List the monitors on the LAN (mDNS), marked paired or unpaired."
    )

    @OptionGroup var data: DataDirectoryOption

    @Option(help: "How long to listen for announcements, in seconds.")
    var seconds = 3

    @Flag(help: "Print one JSON object per line instead of text.")
    var json = false

    func run() async throws {
        let lines = try await reportingFailures("scan") {
            try await LANScan.run(in: data.directory, seconds: seconds, json: json)
        }
        for line in lines { print(line) }
    }
}
