import ArgumentParser
import CribCallSystemd
import Foundation
import SystemdUnit

/// `cribcall install-service monitor|listener`: writes a systemd user unit that runs `cribcall monitor` or
/// `cribcall listen` in the background and restarts it when it fails. Argument parsing only; the two units are in
/// the CribCallSystemd module, the unit text, the quoting and the file writing in the SystemdUnit module.
struct InstallServiceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "install-service",
        abstract: "Install a systemd user service that runs the monitor or the listener.",
        discussion: """
            Writes cribcall-monitor.service or cribcall-listener.service into $XDG_CONFIG_HOME/systemd/user (default \
            ~/.config/systemd/user) and prints the commands that enable and start it. The service runs this cribcall \
            program with the data directory and options given here. An existing unit with different settings is \
            kept unless --force is given.
            """
    )

    /// Which service to install.
    enum Role: String, ExpressibleByArgument, CaseIterable {
        case monitor, listener

        var unitRole: CribCallServiceUnit.Role {
            switch self {
            case .monitor: .monitor
            case .listener: .listener
            }
        }
    }

    @Argument(help: "Which service: monitor (cribcall monitor) or listener (cribcall listen).")
    var role: Role

    @OptionGroup var data: DataDirectoryOption

    @Option(help: "The monitor's or listener's name, passed to the service.")
    var name: String?

    @Option(help: "Monitor only: the audio source, passed to the service (see `cribcall monitor --help`).")
    var audioSource: String?

    @Option(help: "Monitor only: UDP port of the control channel, passed to the service.")
    var port: Int?

    @Option(
        help: "Directory to write the unit into (default: $XDG_CONFIG_HOME/systemd/user or ~/.config/systemd/user).")
    var unitDir: String?

    @Option(help: "The cribcall program the service runs (default: this program).")
    var executable: String?

    @Flag(help: "Replace an existing unit that has different settings.")
    var force = false

    @Flag(name: .customLong("print"), help: "Only print the unit on stdout; write nothing.")
    var printOnly = false

    func validate() throws {
        if role == .listener, audioSource != nil || port != nil {
            throw ValidationError("--audio-source and --port are settings of the monitor service")
        }
        if let port, !(1...65535).contains(port) {
            throw ValidationError("--port must be between 1 and 65535")
        }
    }

    func run() throws {
        try reportingFailures("install-service") {
            let program =
                executable.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
                ?? CribCallServiceUnit.currentExecutable()
            guard FileManager.default.isExecutableFile(atPath: program) else {
                throw CommandFailure(
                    "\(program) is not an executable program; pass the cribcall binary with --executable")
            }
            let settings = CribCallServiceUnit.Settings(
                executable: program, dataDirectory: data.url, name: name, audioSource: audioSource, port: port)
            let unit = try CribCallServiceUnit.unit(role.unitRole, settings)
            let text = try unit.rendered()
            if printOnly {
                FileHandle.standardOutput.write(Data(text.utf8))
                return
            }
            let directory =
                unitDir.map { URL(fileURLWithPath: $0, isDirectory: true).standardizedFileURL }
                ?? UnitFileInstaller.defaultDirectory()
            let outcome = try UnitFileInstaller.install(text, named: unit.name, in: directory, force: force)
            let path = directory.appendingPathComponent(unit.name).path
            let what =
                switch outcome {
                case .created: "Wrote"
                case .replaced: "Replaced"
                case .unchanged: "Already up to date:"
                }
            var lines = ["\(what) \(path)", "Next:"]
            lines += UnitFileInstaller.nextSteps(for: unit.name, in: directory).map { "  " + $0 }
            print(lines.joined(separator: "\n"))
        }
    }
}
