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
