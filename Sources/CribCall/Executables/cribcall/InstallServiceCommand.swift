import ArgumentParser
import CribCallApp
import Foundation

/// `cribcall install-service monitor|listener`: writes a systemd user unit that runs `cribcall monitor` or
/// `cribcall listen` in the background and restarts it when it fails. Argument parsing only; the
/// work is in CribCallApp.
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

    @Flag(help: "Monitor only: watch the camera with the safety detectors (see `cribcall monitor --help`).")
    var safety = false

    @Option(help: "Monitor only: the camera, passed to the service (see `cribcall monitor --help`).")
    var videoSource: String?

    @Option(
        help: ArgumentHelp(
            "Serve the app for parents on this loopback port (0: any free port), and add a launcher to the "
                + "application menu that opens it.",
            valueName: "port"))
    var web: Int?

    @Option(
        help: "Directory to write the unit into (default: $XDG_CONFIG_HOME/systemd/user or ~/.config/systemd/user).")
    var unitDir: String?

    @Option(
        help:
            "Directory to write the launcher into (default: $XDG_DATA_HOME/applications or ~/.local/share/applications)."
    )
    var launcherDir: String?

    @Option(help: "The cribcall program the service runs (default: this program).")
    var executable: String?

    @Flag(help: "Replace an existing unit that has different settings.")
    var force = false

    @Flag(name: .customLong("print"), help: "Only print the unit on stdout; write nothing.")
    var printOnly = false

    var request: InstallServiceRequest {
        var request = InstallServiceRequest(role: role == .monitor ? .monitor : .listener)
        request.name = name
        request.audioSource = audioSource
        request.port = port
        request.safety = safety
        request.videoSource = videoSource
        request.web = web
        request.unitDirectory = unitDir
        request.launcherDirectory = launcherDir
        request.executable = executable
        request.force = force
        return request
    }

    func validate() throws {
        try reportingFailures("install-service") { try request.validate() }
    }

    func run() throws {
        let request = request
        if printOnly {
            let text = try reportingFailures("install-service") { try request.unitText(in: data.directory) }
            FileHandle.standardOutput.write(Data(text.utf8))
        } else {
            print(try reportingFailures("install-service") { try request.install(in: data.directory) })
        }
    }
}
