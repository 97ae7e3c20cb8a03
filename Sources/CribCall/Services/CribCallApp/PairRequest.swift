import CanonicalJSON
import CribCallListener
import CribCallProtocol
public import CribCallRuntime
import CribCallStore
import DeviceIdentity
import DeviceIdentityStore
import Foundation
import QUIC
import ServiceDiscovery

/// `cribcall pair`: pairs this listener with a monitor, by PIN or by the monitor's QR code (``MonitorPairing``), asking
/// for the PIN on the terminal unless `--pin-code` gives it.
public struct PairRequest: Sendable {
    /// What to pair with, and how.
    public var pairing: MonitorPairing

    public init(_ pairing: MonitorPairing) {
        self.pairing = pairing
    }

    /// Pairs, and returns what to tell the user.
    public func run(in data: CribCallDataDirectory) async throws -> String {
        Self.paired(try await pairing.pair(in: data, enterPIN: Self.askOnTerminal))
    }

    /// What `cribcall pair` prints once paired: the monitor's name as it may be shown (``PeerName/sanitized(_:)``:
    /// the monitor chose it) and its short fingerprint.
    static func paired(_ record: TrustedMonitorRecord) -> String {
        "Paired with \"\(PeerName.sanitized(record.name))\" (\(record.fingerprint.shortForm)). "
            + "Run `cribcall listen` for alerts."
    }

    /// Asks for the PIN on the terminal (a wrong one said as such).
    @Sendable static func askOnTerminal(_ prompt: MonitorPairing.PINPrompt) async -> String? {
        print(prompt.question, terminator: "")
        return readLine()?.filter { !$0.isWhitespace }
    }
}

/// `cribcall scan`: the monitors announced on the LAN, marked paired or not.
public enum LANScan {
    /// Listens for announcements for `seconds` and returns one line per monitor (text or JSON), or, in text, how to
    /// find one when none answered.
    public static func run(in data: CribCallDataDirectory, seconds: Int, json: Bool) async throws -> [String] {
        let identity = try data.identity().identity
        let service = ListenerService(
            identity: identity, name: ProcessInfo.processInfo.hostName, database: try data.database(),
            connector: try QUICConnector(identity: identity))
        let found = try await service.scan(using: DNSSDServiceDiscovery(), for: .seconds(seconds))
        if found.isEmpty && !json {
            return [
                "No monitor found on the LAN within \(seconds) s. Is one running (`cribcall monitor`), on this network?"
            ]
        }
        return found.map { line($0.monitor, paired: $0.paired, json: json) }
    }

    /// One monitor seen on the LAN. Its TXT record is anyone's to write: in text its name is shown as it may be
    /// (``PeerName/sanitized(_:)``) and its id escaped (``TextTable/printable(_:)``); JSON keeps both exact.
    static func line(_ monitor: DiscoveredMonitor, paired: Bool, json: Bool) -> String {
        guard !json else {
            return JSONValue.object([
                "event": "monitor", "monitorId": .string(monitor.monitorId),
                "monitorName": .string(monitor.monitorName),
                "certFingerprint": .string(monitor.certFingerprint), "port": .number(Double(monitor.port)),
                "hosts": .array(monitor.hosts.map { .string($0) }), "paired": .bool(paired),
            ]).canonicalString
        }
        return "\(PeerName.sanitized(monitor.monitorName)) — \(paired ? "paired" : "unpaired") — "
            + "\(TextTable.printable(monitor.hosts.first ?? "?")):\(monitor.port) "
            + "(id \(TextTable.printable(String(monitor.monitorId.prefix(8)))))"
    }
}
