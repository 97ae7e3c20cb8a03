import ArgumentParser
import CribCallProtocol
import CribCallStore
import Foundation

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
                PIN pairing locks after \(PINPairingMonitor.lockThreshold) failed sessions in a row, so a PIN \
                cannot be guessed. Unlock only when you know what caused the failures.
                """
        )

        @OptionGroup var data: DataDirectoryOption

        func run() throws {
            try reportingFailures("pairing unlock") {
                let database = try data.databaseCreatingIfNeeded()
                let failures = try database.pinPairingFailures()
                try database.setPinPairingFailures(0)
                if failures >= PINPairingMonitor.lockThreshold {
                    print("PIN pairing was locked after \(failures) failed attempts; it is unlocked now.")
                } else {
                    print("PIN pairing was not locked (\(failures) failed attempts); the counter is reset to 0.")
                }
            }
        }
    }
}
