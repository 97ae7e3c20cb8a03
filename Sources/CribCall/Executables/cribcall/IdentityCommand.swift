import ArgumentParser
import CanonicalJSON
import DeviceIdentity
import DeviceIdentityStore
import Foundation
import Logging

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
        let directory = data.url
        let store = DeviceIdentityStore(directory: directory)
        let loaded: DeviceIdentityStore.Loaded
        do {
            loaded = try store.loadOrCreate()
        } catch {
            Logger(label: "cribcall identity").warning("\(error)")
            throw ExitCode.failure
        }
        let summary = IdentitySummary(loaded.identity, dtls: loaded.dtls)
        if json {
            var object = try JSONValueEncoder().encode(summary)
            if case .object(var members) = object {
                members["event"] = .string("identity")
                members["created"] = .bool(loaded.created)
                members["dataDirectory"] = .string(directory.path)
                object = .object(members)
            }
            print(object.canonicalString)
        } else {
            print(
                """
                \(loaded.created ? "Created a new device identity" : "Device identity") in \(directory.path)
                  deviceId:        \(summary.deviceId)
                  certFingerprint: \(summary.certFingerprint)
                  publicKey:       \(summary.publicKey)
                  dtlsFingerprint: \(summary.dtlsFingerprint ?? "-")
                certificatePEM:
                \(summary.certificatePEM)
                """
            )
        }
    }
}
