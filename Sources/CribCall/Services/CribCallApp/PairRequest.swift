import CanonicalJSON
import CribCallListener
import CribCallProtocol
public import CribCallStore
import DeviceIdentity
import DeviceIdentityStore
import Foundation
import QUIC
import ServiceDiscovery
import Synchronization

/// `cribcall pair`: pairs this listener with a monitor, by PIN or by the monitor's QR code.
public struct PairRequest: Sendable {
    /// Pair with the PIN the monitor shows.
    public var pin = false
    /// The monitor's QR code text (its JSON).
    public var qr: String?
    /// The monitor to pair with, by id (or its first characters) or name, found on the LAN.
    public var monitor: String?
    /// HOST:PORT (with a QR code, HOST alone uses the QR's port).
    public var address: String?
    /// The monitor's certificate fingerprint (64 hex characters).
    public var fingerprint: String?
    /// What to call the monitor (PIN pairing; a QR code carries it).
    public var monitorName: String?
    /// The PIN, for scripts; otherwise it is asked for on the terminal.
    public var pinCode: String?
    /// This listener's name, shown on the monitor.
    public var name: String

    public init(name: String) {
        self.name = name
    }

    /// Pairs, and returns what to tell the user.
    public func run(in data: CribCallDataDirectory) async throws -> String {
        Self.paired(try await pair(in: data))
    }

    /// Pairs the listener of `data` (an Argus hub's too), and returns the monitor it now trusts.
    public func pair(in data: CribCallDataDirectory) async throws -> TrustedMonitorRecord {
        let identity = try data.identity().identity
        let service = ListenerService(
            identity: identity, name: name, database: try data.database(),
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
            record = try await pairWithPIN(service)
        } else {
            throw CommandFailure.usage("choose --pin or --qr")
        }
        return record
    }

    /// What `cribcall pair` prints once paired: the monitor's name as it may be shown (``PeerName/sanitized(_:)``:
    /// the monitor chose it) and its short fingerprint.
    static func paired(_ record: TrustedMonitorRecord) -> String {
        "Paired with \"\(PeerName.sanitized(record.name))\" (\(record.fingerprint.shortForm)). "
            + "Run `cribcall listen` for alerts."
    }

    private func pairWithPIN(_ service: ListenerService) async throws -> TrustedMonitorRecord {
        // A PIN that cannot be right is refused before a pairing session (and one of its tries) is used.
        if let pinCode, pinCode.count != 6 || !pinCode.allSatisfy({ $0.isASCII && $0.isNumber }) {
            throw CommandFailure.usage("--pin-code is the 6 digits the monitor shows (got '\(pinCode.prefix(20))')")
        }
        var (host, port) = try Self.split(address ?? "", requirePort: address != nil)
        var fingerprintText = fingerprint
        var name = monitorName
        if let monitor {
            let answer: DiscoveredMonitor?
            do {
                answer = try await service.find(monitor, using: DNSSDServiceDiscovery())
            } catch {
                throw CommandFailure(
                    "cannot look for monitors on the LAN: \(error); or pair with --address HOST:PORT --fingerprint FP")
            }
            guard let found = answer else {
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
            throw CommandFailure.usage("--pin needs --monitor ID|NAME (discovery) or --address HOST:PORT")
        }
        guard let text = fingerprintText, let pinned = CertificateFingerprint(hex: text) else {
            throw CommandFailure.usage("--pin needs --fingerprint: the 64 hex characters the monitor prints")
        }
        let scripted = pinCode
        // The tries left, as last asked: fewer now means the PIN before was wrong.
        let asked = Mutex<Int?>(nil)
        do {
            return try await service.pairWithPIN(host: host, port: port, fingerprint: pinned, monitorName: name) {
                attempts in
                let wrong = asked.withLock { previous in
                    defer { previous = attempts }
                    return previous.map { attempts < $0 } ?? false
                }
                if let scripted { return wrong ? nil : scripted }
                let left = "\(attempts) attempt\(attempts == 1 ? "" : "s") left"
                print(
                    (wrong
                        ? "Wrong PIN. Enter the PIN shown on the monitor again (\(left)): "
                        : "Enter the PIN shown on the monitor (\(left)): "),
                    terminator: "")
                return readLine()?.filter { !$0.isWhitespace }
            }
        } catch {
            // --pin-code was wrong: say so, rather than try the same wrong PIN again.
            if let scripted, let left = asked.withLock({ $0 }), left < PINPairingMonitor.maxAttempts {
                throw CommandFailure(
                    "wrong PIN (\(scripted)): \(left) attempt\(left == 1 ? "" : "s") left on the monitor's PIN; "
                        + "run again with the PIN it shows")
            }
            throw error
        }
    }

    /// Splits HOST[:PORT] (IPv6 as [ADDR]:PORT); empty text is neither.
    static func split(_ text: String, requirePort: Bool) throws -> (host: String?, port: Int?) {
        guard !text.isEmpty else { return (nil, nil) }
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            let host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":"), let port = Int(rest.dropFirst()) else {
                if requirePort { throw CommandFailure.usage("address '\(text)' needs a port: [ADDR]:PORT") }
                return (host, nil)
            }
            return (host, port)
        }
        let parts = text.split(separator: ":")
        if parts.count == 2, let port = Int(parts[1]) { return (String(parts[0]), port) }
        if requirePort { throw CommandFailure.usage("address '\(text)' needs a port: HOST:PORT") }
        return (text, nil)
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
