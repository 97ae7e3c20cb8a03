import ArgumentParser
import CribCallApp
import CribCallRuntime
import Foundation

/// `cribcall pair`: pairs this listener with a monitor, by PIN or by the monitor's QR code.
struct PairCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pair",
        abstract: "Pair this listener with a monitor (PIN or QR code).",
        discussion: """
            By PIN: cribcall pair --pin --address HOST:PORT --fingerprint FP (the monitor prints both), then type \
            the PIN the monitor shows (or --monitor NAME to find it on the LAN). By QR code: cribcall pair --qr 'JSON' \
            [--address HOST[:PORT]] (without --address the monitor is found on the LAN).
            """
    )

    @Flag(help: "Pair with the PIN the monitor shows.")
    var pin = false

    @Option(help: "The monitor's QR code text (its JSON).")
    var qr: String?

    @Option(help: "The monitor to pair with, by id (or its first characters) or name, found on the LAN.")
    var monitor: String?

    @Option(help: "The monitor's address, HOST:PORT (with --qr, HOST alone uses the QR's port).")
    var address: String?

    @Option(help: "The monitor's certificate fingerprint (64 hex characters), as the monitor prints it.")
    var fingerprint: String?

    @Option(name: .customLong("monitor-name"), help: "What to call the monitor (PIN pairing; a QR code carries it).")
    var monitorName: String?

    @Option(name: .customLong("pin-code"), help: "The PIN, for scripts (otherwise it is asked for).")
    var pinCode: String?

    @Option(help: "This listener's name, shown on the monitor.")
    var name = ProcessInfo.processInfo.hostName

    @OptionGroup var data: DataDirectoryOption

    func run() async throws {
        var pairing = MonitorPairing(name: name)
        pairing.pin = pin
        pairing.qr = qr
        pairing.monitor = monitor
        pairing.address = address
        pairing.fingerprint = fingerprint
        pairing.monitorName = monitorName
        pairing.pinCode = pinCode
        print(try await reportingFailures("pair") { try await PairRequest(pairing).run(in: data.directory) })
    }
}
