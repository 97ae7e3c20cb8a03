import ArgumentParser
import CribCallListener
import CribCallProtocol
import CribCallStore
import DeviceIdentity
import DeviceIdentityStore
import Foundation
import QUIC
import ServiceDiscovery

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
        try await reportingFailures("pair") { try await pair() }
    }

    private func pair() async throws {
        let directory = data.url
        let identity = try DeviceIdentityStore(directory: directory).loadOrCreate().identity
        let database = try CribCallDatabase(directory: directory)
        let service = ListenerService(
            identity: identity, name: name, database: database,
            connector: try QUICConnector(identity: identity))
        let record: TrustedMonitorRecord
        if let qr {
            let (host, port) = try Self.split(address ?? "", requirePort: false)
            if let host {
                record = try await service.pairWithQR(qrText: qr, host: host, port: port)
            } else {
                record = try await service.pairWithQR(qrText: qr, discoveringWith: DNSSDServiceDiscovery())
            }
        } else if pin {
            var (host, port) = try Self.split(address ?? "", requirePort: address != nil)
            var fingerprintText = fingerprint
            var name = monitorName
            if let monitor {
                guard let found = try await service.find(monitor, using: DNSSDServiceDiscovery()) else {
                    throw CommandFailure(
                        "no monitor '\(monitor)' answered on the LAN; see `cribcall scan`, or pair with "
                            + "--address HOST:PORT --fingerprint FP")
                }
                host = found.hosts.first { !$0.contains(":") } ?? found.hosts.first
                port = found.port
                fingerprintText = found.certFingerprint
                name = name ?? found.monitorName
            }
            guard let host, let port else {
                throw ValidationError("--pin needs --monitor ID|NAME (discovery) or --address HOST:PORT")
            }
            guard let text = fingerprintText, let pinned = CertificateFingerprint(hex: text) else {
                throw ValidationError("--pin needs --fingerprint: the 64 hex characters the monitor prints")
            }
            let scripted = pinCode
            record = try await service.pairWithPIN(
                host: host, port: port, fingerprint: pinned,
                monitorName: name
            ) { attempts in
                if let scripted { return scripted }
                print(
                    "Enter the PIN shown on the monitor (\(attempts) attempt\(attempts == 1 ? "" : "s") left): ",
                    terminator: "")
                return readLine()?.filter { !$0.isWhitespace }
            }
        } else {
            throw ValidationError("choose --pin or --qr")
        }
        print("Paired with \"\(record.name)\" (\(record.fingerprint.shortForm)). Run `cribcall listen` for alerts.")
    }

    /// Splits HOST[:PORT] (IPv6 as [ADDR]:PORT).
    static func split(_ text: String, requirePort: Bool) throws -> (String?, Int?) {
        guard !text.isEmpty else { return (nil, nil) }
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            let host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":"), let port = Int(rest.dropFirst()) else {
                if requirePort { throw ValidationError("address '\(text)' needs a port: [ADDR]:PORT") }
                return (host, nil)
            }
            return (host, port)
        }
        let parts = text.split(separator: ":")
        if parts.count == 2, let port = Int(parts[1]) { return (String(parts[0]), port) }
        if requirePort { throw ValidationError("address '\(text)' needs a port: HOST:PORT") }
        return (text, nil)
    }
}
