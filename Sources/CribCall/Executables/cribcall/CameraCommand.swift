import ArgumentParser
import CribCallApp

/// `cribcall camera disconnect|reconnect`: argument parsing only; the work is in CribCallApp.
struct CameraCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "camera",
        abstract: "Disconnect the running monitor's camera as if unplugged, or reconnect it (for trying things out).",
        discussion: """
            The monitor must run with --safety and the same --data-dir. While disconnected, monitoring is paused \
            ("camera disconnected") and no safety alert is raised; reconnect resumes it.
            """
    )

    @Argument(help: ArgumentHelp("disconnect or reconnect.", valueName: "action"))
    var action: String

    @OptionGroup var data: DataDirectoryOption

    func run() async throws {
        try await reportingFailures("camera") { print(try await CameraCommands.run(action, in: data.directory)) }
    }
}
