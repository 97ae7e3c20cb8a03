public import Foundation
public import SystemdUnit

/// The user services of `cribcall install-service`: `cribcall monitor` or `cribcall listen` under the user's
/// systemd manager.
public enum CribCallServiceUnit {
    /// Which CribCall command the service runs.
    public enum Role: String, Sendable, Hashable, CaseIterable {
        /// `cribcall monitor`.
        case monitor
        /// `cribcall listen`.
        case listener

        /// The unit file name.
        public var unitName: String { "cribcall-\(rawValue).service" }

        var subcommand: String {
            switch self {
            case .monitor: "monitor"
            case .listener: "listen"
            }
        }
    }

    /// The settings passed to the command.
    public struct Settings: Sendable, Hashable {
        /// The absolute path of the cribcall program.
        public var executable: String
        /// The data directory (made absolute against the current directory).
        public var dataDirectory: URL
        /// `--name`.
        public var name: String?
        /// `--audio-source` (monitor only).
        public var audioSource: String?
        /// `--port` (monitor only).
        public var port: Int?
        /// `--safety` (monitor only).
        public var safety = false
        /// `--video-source` (monitor only).
        public var videoSource: String?
        /// `--web PORT`: the app for parents, opened by the launcher.
        public var web: Int?

        public init(
            executable: String, dataDirectory: URL, name: String? = nil, audioSource: String? = nil,
            port: Int? = nil
        ) {
            self.executable = executable
            self.dataDirectory = dataDirectory
            self.name = name
            self.audioSource = audioSource
            self.port = port
        }
    }

    /// The launcher that opens the app for parents of the service (`cribcall open`), when it serves one.
    public static func launcher(_ role: Role, _ settings: Settings) -> DesktopEntry? {
        guard settings.web != nil else { return nil }
        return DesktopEntry(
            fileName: "cribcall-\(role.rawValue).desktop",
            name: "CribCall" + (settings.name.map { " (\($0))" } ?? ""),
            comment: "The baby monitor's app: live view, alerts, history and settings",
            executable: settings.executable,
            arguments: ["open", "--data-dir", settings.dataDirectory.standardizedFileURL.path],
            icon: "camera-web")
    }

    /// The unit for `role` with `settings`.
    ///
    /// - Throws: ``SystemdUnitError`` `invalidCommand` for monitor-only settings on a listener, or a program path
    ///   a unit cannot express.
    public static func unit(_ role: Role, _ settings: Settings) throws -> UserServiceUnit {
        var arguments = [role.subcommand, "--data-dir", settings.dataDirectory.standardizedFileURL.path]
        if let name = settings.name { arguments += ["--name", name] }
        switch role {
        case .monitor:
            if let audioSource = settings.audioSource { arguments += ["--audio-source", audioSource] }
            if let port = settings.port { arguments += ["--port", String(port)] }
            if settings.safety { arguments.append("--safety") }
            if let videoSource = settings.videoSource { arguments += ["--video-source", videoSource] }
        case .listener:
            guard settings.audioSource == nil, settings.port == nil, !settings.safety, settings.videoSource == nil
            else {
                throw SystemdUnitError(
                    .invalidCommand,
                    "--audio-source, --port, --safety and --video-source are settings of the monitor")
            }
        }
        if let web = settings.web { arguments += ["--web", String(web)] }
        let what = role == .monitor ? "monitor" : "listener"
        let unit = UserServiceUnit(
            name: role.unitName,
            description: "CribCall \(what)" + (settings.name.map { " \"\($0)\"" } ?? ""),
            executable: settings.executable,
            arguments: arguments,
            finalExitStatuses: role == .listener ? [Self.listenerNotTrustedStatus] : [],
            generator: "cribcall install-service \(role.rawValue)")
        _ = try unit.rendered()  // report an inexpressible command now
        return unit
    }

    /// The exit status of `cribcall listen` when no monitor it follows trusts it any more (sysexits' EX_NOPERM):
    /// pairing again helps, starting again does not, so the listener's unit does not restart on it.
    public static let listenerNotTrustedStatus: Int32 = 77
}
