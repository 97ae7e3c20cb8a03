import Foundation
import SystemdUnit

/// `toukan install-service`: a systemd user unit that runs the recorder daemon at login, so recordings queued while
/// the machine was off upload without anyone typing `toukan`. `toukan start` then talks to that daemon.
extension ToukanCommands {
    /// The unit's file name.
    static let unitName = "toukan.service"

    /// The unit running `toukan daemon --data-dir …` with the program at `executable` (default: this one).
    func unit(executable: String?) throws -> UserServiceUnit {
        let program =
            executable.map { URL(fileURLWithPath: $0).standardizedFileURL.path } ?? UserServiceUnit.currentExecutable()
        guard FileManager.default.isExecutableFile(atPath: program) else {
            throw ToukanFailure("\(program) is not an executable program; pass the toukan binary with --executable")
        }
        let unit = UserServiceUnit(
            name: Self.unitName, description: "Toukan recorder and upload queue", executable: program,
            arguments: ["daemon", "--data-dir", data.url.path], generator: "toukan install-service")
        _ = try unit.rendered()  // report an inexpressible command now
        return unit
    }

    /// The unit's text (`--print`: nothing is written).
    public func serviceUnitText(executable: String?) throws -> String {
        try unit(executable: executable).rendered()
    }

    /// Writes the unit (an existing different one only with `force`) and returns what was done and what to run next.
    public func installService(unitDirectory: String?, executable: String?, force: Bool) throws -> String {
        try UnitFileInstaller.installReport(
            try unit(executable: executable), in: unitDirectory.map { URL(fileURLWithPath: $0, isDirectory: true) },
            force: force)
    }
}
