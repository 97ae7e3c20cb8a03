public import CribCallRuntime
import CribCallSystemd
import Foundation
import SystemdUnit

/// `cribcall install-service monitor|listener`: a systemd user unit that runs `cribcall monitor` or
/// `cribcall listen` in the background and restarts it when it fails. The two units are in CribCallSystemd; the unit
/// text, the quoting and the file writing in SystemdUnit.
public struct InstallServiceRequest: Sendable {
    /// Which service to install.
    public enum Role: String, Sendable, CaseIterable {
        case monitor, listener
    }

    public var role: Role
    /// The monitor's or listener's name, passed to the service.
    public var name: String?
    /// Monitor only: the audio source.
    public var audioSource: String?
    /// Monitor only: UDP port of the control channel.
    public var port: Int?
    /// Monitor only: watch the camera with the safety detectors.
    public var safety = false
    /// Monitor only: the camera.
    public var videoSource: String?
    /// Serve the app for parents on this loopback port, and install a launcher that opens it.
    public var web: Int?
    /// Where to write the unit (default: $XDG_CONFIG_HOME/systemd/user or ~/.config/systemd/user).
    public var unitDirectory: String?
    /// Where to write the launcher (default: $XDG_DATA_HOME/applications or ~/.local/share/applications).
    public var launcherDirectory: String?
    /// The cribcall program the service runs (default: the running one).
    public var executable: String?
    /// Replace an existing unit that has different settings.
    public var force = false

    public init(role: Role) {
        self.role = role
    }

    /// The arguments that cannot work together, found before anything runs.
    public func validate() throws {
        if role == .listener, audioSource != nil || port != nil || safety || videoSource != nil {
            throw CommandFailure.usage(
                "--audio-source, --port, --safety and --video-source are settings of the monitor service")
        }
        if let web, !(0...65535).contains(web) {
            throw CommandFailure.usage("--web must be a port between 0 and 65535 (0: any free port)")
        }
        if let port, !(1...65535).contains(port) {
            throw CommandFailure.usage("--port must be between 1 and 65535")
        }
    }

    /// The unit's text (`--print`: nothing is written).
    public func unitText(in data: CribCallDataDirectory) throws -> String {
        try unit(in: data).rendered()
    }

    /// Writes the unit and returns what was done and the commands that enable and start it.
    public func install(in data: CribCallDataDirectory) throws -> String {
        var report = try UnitFileInstaller.installReport(
            try unit(in: data), in: unitDirectory.map { URL(fileURLWithPath: $0, isDirectory: true) }, force: force)
        if let launcher = CribCallServiceUnit.launcher(role == .monitor ? .monitor : .listener, try settings(in: data))
        {
            let directory =
                launcherDirectory.map { URL(fileURLWithPath: $0, isDirectory: true) } ?? DesktopEntry.defaultDirectory()
            let outcome = try UnitFileInstaller.install(
                try launcher.rendered(), named: launcher.fileName, in: directory, force: force)
            let path = directory.appendingPathComponent(launcher.fileName).path
            report +=
                "\n\(outcome == .unchanged ? "Already up to date:" : "Wrote") \(path): \"\(launcher.name)\" in the "
                + "application menu opens the app (`cribcall open` does the same)."
        }
        return report
    }

    private func settings(in data: CribCallDataDirectory) throws -> CribCallServiceUnit.Settings {
        let program =
            executable.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
            ?? UserServiceUnit.currentExecutable()
        guard FileManager.default.isExecutableFile(atPath: program) else {
            throw CommandFailure("\(program) is not an executable program; pass the cribcall binary with --executable")
        }
        var settings = CribCallServiceUnit.Settings(
            executable: program, dataDirectory: data.url, name: name, audioSource: audioSource, port: port)
        settings.safety = safety
        settings.videoSource = videoSource
        settings.web = web
        return settings
    }

    private func unit(in data: CribCallDataDirectory) throws -> UserServiceUnit {
        try CribCallServiceUnit.unit(role == .monitor ? .monitor : .listener, try settings(in: data))
    }
}
