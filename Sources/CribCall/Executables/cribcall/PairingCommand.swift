import ArgumentParser
import CribCallApp

/// `cribcall pairing`: the monitor's pairing state.
struct PairingCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pairing",
        abstract: "Manage the monitor's pairing state.",
        subcommands: [Unlock.self]
    )

    /// `cribcall pairing unlock`.
    struct Unlock: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Re-enable PIN pairing after it locked itself (resets the failed-attempt counter).",
            discussion: """
                PIN pairing locks after \(SettingsCommands.pinLockThreshold) failed sessions in a row, so a PIN \
                cannot be guessed. Unlock only when you know what caused the failures.
                """
        )

        @OptionGroup var data: DataDirectoryOption

        func run() throws {
            print(try reportingFailures("pairing unlock") { try SettingsCommands.unlockPairing(in: data.directory) })
        }
    }
}
