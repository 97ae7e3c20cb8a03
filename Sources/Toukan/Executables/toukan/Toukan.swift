import ArgumentParser
import Foundation
import Logging
import ToukanApp

/// `toukan`: the recorder that never loses audio. Argument parsing only; the work is in ToukanApp.
@main
struct Toukan: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "toukan",
        abstract: "Toukan: record, and never lose a recording; uploads happen in the background.",
        subcommands: [
            Start.self, Stop.self, Status.self, History.self, Retry.self, Cleanup.self, InstallService.self,
            Daemon.self,
        ]
    )

    static func main() async {
        ToukanLogging.bootstrap(arguments: CommandLine.arguments)
        await main(nil)
    }

    struct Options: ParsableArguments {
        @Option(name: .long, help: ArgumentHelp(ToukanDataDirectory.help))
        var dataDir: String?

        @Flag(help: "Print JSON instead of text.")
        var json = false

        var commands: ToukanCommands { ToukanCommands(data: ToukanDataDirectory(path: dataDir), json: json) }
    }

    /// `toukan start`.
    struct Start: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Start recording (the daemon starts on first use). Already recording: nothing changes.")

        @Option(help: ArgumentHelp("Where to record from: \(ToukanApp.sourceSyntax).", valueName: "source"))
        var audioSource = "auto"

        @Option(help: "The upload server, e.g. http://192.168.1.20:8080 (remembered; default: $TOUKAN_SERVER).")
        var server: String?

        @OptionGroup var options: Options

        func run() async throws {
            print(
                try await reporting("start") { try await options.commands.start(source: audioSource, server: server) })
        }
    }

    /// `toukan stop`.
    struct Stop: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Stop recording and save it for upload.")

        @OptionGroup var options: Options

        func run() async throws {
            print(try await reporting("stop") { try await options.commands.stop() })
        }
    }

    /// `toukan status`.
    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show whether Toukan is recording: the timer, the level, the file.")

        @Flag(help: "Keep showing the timer and a live level meter (Ctrl-C to leave; recording goes on).")
        var watch = false

        @OptionGroup var options: Options

        func run() async throws {
            let commands = options.commands
            guard watch else {
                print(try await reporting("status") { try await commands.status() })
                return
            }
            try await reporting("status") {
                for try await line in commands.watch() {
                    if options.json {
                        print(line)
                    } else {
                        FileHandle.standardOutput.write(Data(("\r\u{1B}[2K" + line).utf8))
                    }
                }
                if !options.json { print() }
            }
        }
    }

    /// `toukan history`.
    struct History: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List recordings, newest first, with their upload status and progress.")

        @OptionGroup var options: Options

        func run() async throws {
            for line in try await reporting("history", { try await options.commands.history() }) { print(line) }
        }
    }

    /// `toukan retry`.
    struct Retry: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Queue failed uploads again: one recording (its id from `toukan history`) or --all.")

        @Argument(help: "The recording's id, or its first characters.")
        var id: String?

        @Flag(help: "Every failed or waiting recording, now (the app's pull-to-refresh).")
        var all = false

        @OptionGroup var options: Options

        func run() async throws {
            print(try await reporting("retry") { try await options.commands.retry(id, all: all) })
        }
    }

    /// `toukan cleanup`.
    struct Cleanup: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete local files whose upload was confirmed at least 7 days ago (never any other).")

        @OptionGroup var options: Options

        func run() async throws {
            print(try await reporting("cleanup") { try options.commands.cleanup() })
        }
    }

    /// `toukan install-service`.
    struct InstallService: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "install-service",
            abstract: "Install a systemd user service that runs the Toukan daemon at login.",
            discussion: """
                Writes toukan.service into $XDG_CONFIG_HOME/systemd/user (default ~/.config/systemd/user) and prints \
                the commands that enable and start it. An existing unit with other settings is kept unless --force.
                """)

        @Option(help: "Directory to write the unit into.")
        var unitDir: String?

        @Option(help: "The toukan program the service runs (default: this program).")
        var executable: String?

        @Flag(help: "Replace an existing unit that has different settings.")
        var force = false

        @Flag(name: .customLong("print"), help: "Only print the unit on stdout; write nothing.")
        var printOnly = false

        @OptionGroup var options: Options

        func run() async throws {
            let commands = options.commands
            if printOnly {
                print(try await reporting("install-service") { try commands.serviceUnitText(executable: executable) })
            } else {
                print(
                    try await reporting("install-service") {
                        try commands.installService(unitDirectory: unitDir, executable: executable, force: force)
                    })
            }
        }
    }

    /// `toukan daemon`: run by `toukan start`; not for people.
    struct Daemon: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the recorder daemon in the foreground (toukan start launches it).", shouldDisplay: false)

        @Option(name: .long, help: ArgumentHelp(ToukanDataDirectory.help))
        var dataDir: String?

        func run() async throws {
            try await reporting("daemon") { try await DaemonRun(data: ToukanDataDirectory(path: dataDir)).run() }
        }
    }
}

/// A ``ToukanFailure`` or any other error: one line on stderr, `toukan <command>: <message>`, exit status 1.
func reporting<T>(_ command: String, _ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let error as ExitCode {
        throw error
    } catch {
        Logger(label: "toukan \(command)").error("\(error)")
        throw ExitCode.failure
    }
}
