import Foundation

/// A systemd user service (`~/.config/systemd/user/NAME.service`) that runs one long-lived command and restarts it
/// when it fails.
///
/// The hardening is limited to settings that work in the *user* manager without privileges: those that need mount
/// namespaces (`PrivateTmp=`, `ProtectSystem=`, `ProtectHome=`…) require unprivileged user namespaces there and
/// make the unit fail to start where those are off, so they are left out. `After=network-online.target` is a
/// system unit the user manager does not know; the programs retry until the network is up, instead.
public struct UserServiceUnit: Sendable, Hashable {
    /// The file name, e.g. `cribcall-monitor.service`.
    public var name: String
    /// The `Description=`.
    public var description: String
    /// The absolute path of the program.
    public var executable: String
    /// Its arguments.
    public var arguments: [String]
    /// Seconds between a failure and the restart.
    public var restartSeconds: Int
    /// Who wrote it, for the comment at the top, e.g. `cribcall install-service monitor`.
    public var generator: String
    /// Exit statuses that mean "starting again would not help" (`RestartPreventExitStatus=`).
    public var finalExitStatuses: [Int32]

    /// Creates a unit.
    public init(
        name: String, description: String, executable: String, arguments: [String], restartSeconds: Int = 5,
        finalExitStatuses: [Int32] = [], generator: String
    ) {
        self.name = name
        self.description = description
        self.executable = executable
        self.arguments = arguments
        self.restartSeconds = restartSeconds
        self.finalExitStatuses = finalExitStatuses
        self.generator = generator
    }

    /// The unit file's text.
    ///
    /// - Throws: ``SystemdUnitError`` when the command cannot be expressed (see
    ///   ``SystemdSyntax/commandLine(executable:arguments:)``).
    public func rendered() throws -> String {
        let command = try SystemdSyntax.commandLine(executable: executable, arguments: arguments)
        let identifier = name.hasSuffix(".service") ? String(name.dropLast(".service".count)) : name
        return """
            # Written by `\(SystemdSyntax.value(generator))`. Run it again (with --force) to change the settings.
            [Unit]
            Description=\(SystemdSyntax.value(description))

            [Service]
            Type=exec
            ExecStart=\(command)
            Restart=on-failure
            RestartSec=\(restartSeconds)\(finalExitStatuses.isEmpty ? "" : "\nRestartPreventExitStatus=" + finalExitStatuses.map(String.init).joined(separator: " "))
            SyslogIdentifier=\(SystemdSyntax.value(identifier))
            # Hardening that works in the user manager without privileges.
            NoNewPrivileges=yes
            LockPersonality=yes
            RestrictSUIDSGID=yes
            UMask=0077

            [Install]
            WantedBy=default.target

            """
    }

    /// The absolute path of the running program (`/proc/self/exe` on Linux), to put in `ExecStart=`.
    public static func currentExecutable() -> String {
        let proc = URL(fileURLWithPath: "/proc/self/exe")
        if let resolved = try? FileManager.default.destinationOfSymbolicLink(atPath: proc.path), resolved.hasPrefix("/")
        {
            return resolved
        }
        let argument0 = CommandLine.arguments.first ?? "program"
        return URL(fileURLWithPath: argument0).standardizedFileURL.resolvingSymlinksInPath().path
    }
}
