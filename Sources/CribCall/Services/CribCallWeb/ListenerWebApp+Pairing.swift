import CribCallListener
import CribCallProtocol
import CribCallStore
import DeviceIdentity
import Foundation

/// PIN pairing from the page (seed 000: monitors found on the LAN, pairing by PIN): the page picks a monitor, the
/// monitor shows a PIN, the parent types it in the page.
extension ListenerWebApp {
    /// Starts pairing with the monitor at `host:port` that proves `fingerprint`.
    /// - Returns: Why it cannot start, or nil.
    func startPairing(host: String, port: Int, fingerprint text: String, name: String) -> String? {
        if let pairing, pairing.state != "paired", pairing.state != "failed" {
            return "pairing with \(pairing.name) is under way: finish or cancel it first"
        }
        guard let fingerprint = CertificateFingerprint(hex: text) else {
            return "the fingerprint must be 64 hex digits (the monitor shows it)"
        }
        guard (1...65535).contains(port), !host.isEmpty, host.count <= 255 else {
            return "the monitor's address is not usable"
        }
        let inbox = PINInbox()
        let service = service
        let task = Task {
            do {
                let record = try await service.pairWithPIN(
                    host: host, port: port, fingerprint: fingerprint, monitorName: name
                ) { attempts in
                    await self.pinWanted(attemptsRemaining: attempts)
                    return await inbox.next()
                }
                await self.paired(record)
            } catch {
                self.pairingFailed("\(error)")
            }
        }
        pairing = PairingState(name: name, state: "connecting", inbox: inbox, task: task)
        schedulePush()
        return nil
    }

    /// Pairs with the monitor of a pairing QR code's text (pasted, or read by the page's camera): found on the LAN
    /// by the id and fingerprint the code carries, or at `address` (`host` or `host:port`) when given.
    /// - Returns: Why it cannot start, or nil.
    func startQRPairing(qrText: String, address: String?) -> String? {
        if let pairing, pairing.state != "paired", pairing.state != "failed" {
            return "pairing with \(pairing.name) is under way: finish or cancel it first"
        }
        let text = qrText.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else {
            return "paste the pairing code: on the monitor, press Show pairing code, then Copy code"
        }
        guard text.utf8.count <= 4096, let payload = try? QRPairingPayload.parse(text) else {
            return "this is not a CribCall pairing code: copy it again from the monitor (Show pairing code, Copy code)"
        }
        var target: (host: String, port: Int?)?
        if let address = address?.trimmingCharacters(in: .whitespaces), !address.isEmpty {
            guard let parsed = Self.hostAndPort(address) else {
                return "the address must be a host or host:port, e.g. 192.168.1.20 or 192.168.1.20:48080"
            }
            target = parsed
        } else if browser == nil {
            return "looking for monitors is off here: give the monitor's address with the code"
        }
        let name = PeerName.sanitized(payload.monitorName)
        let service = service
        let browser = browser
        let task = Task {
            do {
                let record =
                    if let target {
                        try await service.pairWithQR(qrText: text, host: target.host, port: target.port)
                    } else if let browser {
                        try await service.pairWithQR(qrText: text, discoveringWith: browser)
                    } else {
                        throw CancellationError()
                    }
                await self.paired(record)
            } catch {
                self.pairingFailed(Self.qrFailure(error, name: name))
            }
        }
        pairing = PairingState(name: name, state: "connecting", inbox: PINInbox(), task: task)
        schedulePush()
        return nil
    }

    /// `host`, `host:port`, `[v6]:port` or a bare IPv6 address.
    static func hostAndPort(_ text: String) -> (host: String, port: Int?)? {
        guard text.count <= 255, !text.contains(where: { $0.isWhitespace || $0 == "/" }) else { return nil }
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            let host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            if rest.isEmpty { return host.isEmpty ? nil : (host, nil) }
            guard rest.hasPrefix(":"), let port = Int(rest.dropFirst()), (1...65535).contains(port) else { return nil }
            return (host, port)
        }
        let colons = text.filter { $0 == ":" }.count
        if colons == 1, let colon = text.firstIndex(of: ":") {
            guard let port = Int(text[text.index(after: colon)...]), (1...65535).contains(port),
                colon != text.startIndex
            else { return nil }
            return (String(text[..<colon]), port)
        }
        return text.isEmpty ? nil : (text, nil)
    }

    /// A failed QR pairing in words a parent can act on.
    static func qrFailure(_ error: any Error, name: String) -> String {
        if let pairing = error as? PairingError, pairing.reason == .invalidToken {
            return "\(name) did not accept this code: it expired, was used or was replaced. Show a new code there."
        }
        return "\(error)"
    }

    /// The PIN the parent typed.
    /// - Returns: Why it was not taken, or nil.
    func submitPIN(_ pin: String) async -> String? {
        guard let pairing, pairing.state == "enter_pin" else { return "no pairing is waiting for a PIN" }
        guard pin.count == 6, pin.allSatisfy(\.isASCII), pin.allSatisfy(\.isNumber) else {
            return "the PIN is the 6 digits the monitor shows"
        }
        self.pairing?.state = "checking"
        schedulePush()
        await pairing.inbox.put(pin)
        return nil
    }

    /// Stops pairing.
    func cancelPairing() async {
        guard let pairing else { return }
        await pairing.inbox.cancel()
        pairing.task?.cancel()
        self.pairing = nil
        schedulePush()
    }

    private func pinWanted(attemptsRemaining: Int) {
        pairing?.state = "enter_pin"
        pairing?.attemptsRemaining = attemptsRemaining
        schedulePush()
    }

    private func paired(_ record: TrustedMonitorRecord) async {
        pairing?.state = "paired"
        pairing?.error = nil
        await service.follow(record)
        schedulePush()
    }

    private func pairingFailed(_ reason: String) {
        guard pairing != nil else { return }
        pairing?.state = "failed"
        pairing?.error = reason
        schedulePush()
    }
}

/// The PINs the page sends, waited for by the pairing.
actor PINInbox {
    private var queued: [String] = []
    private var waiting: CheckedContinuation<String?, Never>?
    private var cancelled = false

    func next() async -> String? {
        if !queued.isEmpty { return queued.removeFirst() }
        if cancelled { return nil }
        return await withCheckedContinuation { waiting = $0 }
    }

    func put(_ pin: String) {
        if let waiting {
            self.waiting = nil
            waiting.resume(returning: pin)
        } else {
            queued.append(pin)
        }
    }

    func cancel() {
        cancelled = true
        waiting?.resume(returning: nil)
        waiting = nil
    }
}
