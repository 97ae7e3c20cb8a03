import CribCallListener
import CribCallProtocol
public import CribCallStore
import DeviceIdentity
import DeviceIdentityStore
import Foundation
import QUIC
import ServiceDiscovery
import Synchronization

/// Pairing a CribCall listener (`cribcall pair`, an Argus hub's `monitors pair`) with a monitor, by its QR code or
/// by the PIN it shows: the QUIC connection, DNS-SD and the listener's store, without any text for a terminal.
public struct MonitorPairing: Sendable {
    /// What the one asking for a PIN is told.
    public struct PINPrompt: Sendable, Equatable {
        /// How many tries the monitor still allows.
        public var attemptsLeft: Int
        /// Whether the PIN given last was wrong.
        public var previousWasWrong: Bool

        /// The question for a person at a terminal, a wrong PIN said as such: "Enter the PIN shown on the monitor
        /// (3 attempts left): ".
        public var question: String {
            let left = "\(attemptsLeft) attempt\(attemptsLeft == 1 ? "" : "s") left"
            return previousWasWrong
                ? "Wrong PIN. Enter the PIN shown on the monitor again (\(left)): "
                : "Enter the PIN shown on the monitor (\(left)): "
        }
    }

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
    /// The PIN, for scripts; otherwise ``pair(in:enterPIN:)`` asks for it.
    public var pinCode: String?
    /// This listener's name, shown on the monitor.
    public var name: String

    public init(name: String) {
        self.name = name
    }

    /// Pairs the listener of `data` and returns the monitor it now trusts.
    ///
    /// A request that cannot work is refused before anything is created, asked or sent.
    /// - Parameter enterPIN: Asked for the PIN (PIN pairing without ``pinCode``) until it is right or the monitor
    ///   allows no more tries; nil gives up.
    /// - Throws: ``CribCallRuntimeError`` when the request cannot work, the monitor cannot be found or the PIN
    ///   given was wrong; the connection's and the monitor's errors as they are.
    public func pair(
        in data: CribCallDataDirectory,
        enterPIN: @escaping @Sendable (PINPrompt) async -> String? = { _ in nil }
    ) async throws -> TrustedMonitorRecord {
        guard qr != nil || pin else { throw CribCallRuntimeError(.invalidRequest, "choose --pin or --qr") }
        let (host, port) = try Self.split(address ?? "", requirePort: qr == nil && address != nil)
        if qr == nil { try checkPINRequest(host: host) }
        let identity = try data.identity().identity
        let service = ListenerService(
            identity: identity, name: name, database: try data.database(),
            connector: try QUICConnector(identity: identity))
        guard let qr else { return try await pairWithPIN(service, host: host, port: port, enterPIN: enterPIN) }
        if let host { return try await service.pairWithQR(qrText: qr, host: host, port: port) }
        return try await service.pairWithQR(qrText: qr, discoveringWith: DNSSDServiceDiscovery())
    }

    /// Refuses a PIN pairing that cannot work: a PIN that cannot be right (before a pairing session, and one of its
    /// tries, is used), no way to reach the monitor, no fingerprint to pin.
    private func checkPINRequest(host: String?) throws(CribCallRuntimeError) {
        if let pinCode, pinCode.count != 6 || !pinCode.allSatisfy({ $0.isASCII && $0.isNumber }) {
            throw CribCallRuntimeError(
                .invalidRequest, "--pin-code is the 6 digits the monitor shows (got '\(pinCode.prefix(20))')")
        }
        guard monitor == nil else { return }  // discovery finds its address and fingerprint
        guard host != nil else {
            throw CribCallRuntimeError(
                .invalidRequest, "--pin needs --monitor ID|NAME (discovery) or --address HOST:PORT")
        }
        guard let fingerprint, CertificateFingerprint(hex: fingerprint) != nil else {
            throw CribCallRuntimeError(
                .invalidRequest, "--pin needs --fingerprint: the 64 hex characters the monitor prints")
        }
    }

    private func pairWithPIN(
        _ service: ListenerService, host: String?, port: Int?,
        enterPIN: @escaping @Sendable (PINPrompt) async -> String?
    ) async throws -> TrustedMonitorRecord {
        var (host, port) = (host, port)
        var fingerprintText = fingerprint
        var name = monitorName
        if let monitor {
            let answer: DiscoveredMonitor?
            do {
                answer = try await service.find(monitor, using: DNSSDServiceDiscovery())
            } catch {
                throw CribCallRuntimeError(
                    .notFound,
                    "cannot look for monitors on the LAN: \(error); or pair with --address HOST:PORT --fingerprint FP")
            }
            guard let found = answer else {
                throw CribCallRuntimeError(
                    .notFound,
                    "no monitor '\(monitor)' answered on the LAN; see `cribcall scan`, or pair with "
                        + "--address HOST:PORT --fingerprint FP")
            }
            host = found.hosts.first { !$0.contains(":") } ?? found.hosts.first
            port = found.port
            fingerprintText = found.certFingerprint
            name = name ?? found.monitorName
        }
        guard let host, let port, let text = fingerprintText, let pinned = CertificateFingerprint(hex: text) else {
            throw CribCallRuntimeError(
                .notFound,
                "the monitor on the LAN gave no address or no fingerprint to pair with; pair with "
                    + "--address HOST:PORT --fingerprint FP")
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
                return await enterPIN(PINPrompt(attemptsLeft: attempts, previousWasWrong: wrong))
            }
        } catch {
            // --pin-code was wrong: say so, rather than try the same wrong PIN again.
            if let scripted, let left = asked.withLock({ $0 }), left < PINPairingMonitor.maxAttempts {
                throw CribCallRuntimeError(
                    .wrongPIN,
                    "wrong PIN (\(scripted)): \(left) attempt\(left == 1 ? "" : "s") left on the monitor's PIN; "
                        + "run again with the PIN it shows")
            }
            throw error
        }
    }

    /// Splits HOST[:PORT] (IPv6 as [ADDR]:PORT); empty text is neither.
    static func split(_ text: String, requirePort: Bool) throws(CribCallRuntimeError) -> (host: String?, port: Int?) {
        guard !text.isEmpty else { return (nil, nil) }
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            let host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":"), let port = Int(rest.dropFirst()) else {
                if requirePort {
                    throw CribCallRuntimeError(.invalidRequest, "address '\(text)' needs a port: [ADDR]:PORT")
                }
                return (host, nil)
            }
            return (host, port)
        }
        let parts = text.split(separator: ":")
        if parts.count == 2, let port = Int(parts[1]) { return (String(parts[0]), port) }
        if requirePort { throw CribCallRuntimeError(.invalidRequest, "address '\(text)' needs a port: HOST:PORT") }
        return (text, nil)
    }
}
