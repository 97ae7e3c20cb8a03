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
    /// Where to write the unit (default: $XDG_CONFIG_HOME/systemd/user or ~/.config/systemd/user).
    public var unitDirectory: String?
    /// The cribcall program the service runs (default: the running one).
    public var executable: String?
    /// Replace an existing unit that has different settings.
    public var force = false

    public init(role: Role) {
        self.role = role
    }

    /// The arguments that cannot work together, found before anything runs.
    public func validate() throws {
        if role == .listener, audioSource != nil || port != nil {
            throw CommandFailure.usage("--audio-source and --port are settings of the monitor service")
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
        try UnitFileInstaller.installReport(
            try unit(in: data), in: unitDirectory.map { URL(fileURLWithPath: $0, isDirectory: true) }, force: force)
    }

    private func unit(in data: CribCallDataDirectory) throws -> UserServiceUnit {
        let program =
            executable.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
            ?? UserServiceUnit.currentExecutable()
        guard FileManager.default.isExecutableFile(atPath: program) else {
            throw CommandFailure("\(program) is not an executable program; pass the cribcall binary with --executable")
        }
        let settings = CribCallServiceUnit.Settings(
            executable: program, dataDirectory: data.url, name: name, audioSource: audioSource, port: port)
        return try CribCallServiceUnit.unit(role == .monitor ? .monitor : .listener, settings)
    }
}
