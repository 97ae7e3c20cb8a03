import ArgumentParser
import CanonicalJSON
import CribCallListener
import CribCallProtocol
import CribCallStore
import DeviceIdentityStore
import Foundation
import QUIC
import ServiceDiscovery

/// `cribcall scan`: the monitors announced on the LAN, marked paired or not.
struct ScanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "List the monitors on the LAN (mDNS), marked paired or unpaired."
    )

    @OptionGroup var data: DataDirectoryOption

    @Option(help: "How long to listen for announcements, in seconds.")
    var seconds = 3

    @Flag(help: "Print one JSON object per line instead of text.")
    var json = false

    func run() async throws {
        try await reportingFailures("scan") { try await scan() }
    }

    private func scan() async throws {
        let identity = try DeviceIdentityStore(directory: data.url).loadOrCreate().identity
        let database = try CribCallDatabase(directory: data.url)
        let service = ListenerService(
            identity: identity, name: ProcessInfo.processInfo.hostName, database: database,
            connector: try QUICConnector(identity: identity))
        let found: [ListenerService.ScannedMonitor]
        found = try await service.scan(using: DNSSDServiceDiscovery(), for: .seconds(seconds))
        for entry in found {
            let monitor = entry.monitor
            if json {
                let line: JSONValue = [
                    "event": "monitor", "monitorId": .string(monitor.monitorId),
                    "monitorName": .string(monitor.monitorName),
                    "certFingerprint": .string(monitor.certFingerprint), "port": .number(Double(monitor.port)),
                    "hosts": .array(monitor.hosts.map { .string($0) }), "paired": .bool(entry.paired),
                ]
                print(line.canonicalString)
            } else {
                print(
                    "\(monitor.monitorName) — \(entry.paired ? "paired" : "unpaired") — \(monitor.hosts.first ?? "?"):\(monitor.port) "
                        + "(id \(monitor.monitorId.prefix(8)))")
            }
        }
        if found.isEmpty && !json {
            print(
                "No monitor found on the LAN within \(seconds) s. Is one running (`cribcall monitor`), on this network?"
            )
        }
    }
}
