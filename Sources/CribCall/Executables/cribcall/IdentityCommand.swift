import ArgumentParser
import CribCallApp

/// `cribcall identity`: creates the device identity on first use and prints its public facts.
struct IdentityCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "identity",
        abstract: "Show this device's identity, creating it on first use.",
        discussion: """
            Prints deviceId, certFingerprint (SHA-256 of the certificate DER), publicKey (base64 SPKI) and \
            the certificate PEM. The private key stays in the data directory (mode 0600) and is never printed.
            """
    )

    @OptionGroup var data: DataDirectoryOption

    @Flag(name: .long, help: "Print one JSON object instead of text.")
    var json = false

    func run() throws {
        print(try reportingFailures("identity") { try IdentityReport.describe(in: data.directory, json: json) })
    }
}
