import ArgumentParser
import CribCallApp

/// `cribcall`: the CribCall command-line entry point. Argument parsing only; the work is in CribCallApp.
@main
struct CribCall: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cribcall",
        abstract: "CribCall: a LAN-only baby monitor with no cloud.",
        version: CribCallVersion.current,
        subcommands: [
            MonitorCommand.self, ScanCommand.self, PairCommand.self, ListenCommand.self, IdentityCommand.self,
            CanonicalizeCommand.self,
            DetectCommand.self, ListenersCommand.self, SettingsCommand.self, PairingCommand.self, MonitorsCommand.self,
            OpenAppCommand.self, CameraCommand.self,
            InstallServiceCommand.self, AlertCommand.self,
        ]
    )

    /// Diagnostics go through swift-log, printed as `cribcall <command>: <message>` on stderr.
    static func main() async {
        CribCallLogging.bootstrap()
        await main(nil)
    }
}
