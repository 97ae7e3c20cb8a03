import CribCallProtocol
import CribCallStore
import QRCode
import SafetyDetection

extension MonitorEvent {
    /// The event as `cribcall monitor` prints it for people; nil for events that print nothing.
    ///
    /// - Parameters:
    ///   - interactive: Keys work (an interactive terminal), so the ready message mentions them.
    ///   - qrPNG: Where the QR code is also written, to say so.
    public func text(interactive: Bool, qrPNG: String? = nil) -> String? {
        switch self {
        case .ready(_, let name, let fingerprint, let port):
            return "Monitor \"\(name)\" is listening on UDP port \(port).\n"
                + "  Certificate fingerprint: \(fingerprint)\n"
                + "  Listeners pair with: cribcall pair --pin --address HOST:\(port) --fingerprint \(fingerprint)"
                + (interactive ? "\n  Press q to show a pairing QR code; Ctrl-C stops the monitor." : "")
        case .qr(_, let text):
            let picture = (try? QRCodeEncoder.encode(text).terminalText()) ?? ""
            return "Pairing QR code (valid 5 minutes) — scan it, or pass its text to `cribcall pair --qr`:\n"
                + picture + "\n  \(text)" + (qrPNG.map { "\n  (also written to \($0))" } ?? "")
        case .pin(let pin, _, let seconds, let attempts):
            return PINDisplay.render(pin, expiresInSec: seconds, attempts: attempts)
        case .pinHidden:
            return "  (the PIN is no longer valid)"
        case .paired(_, let name, _, let method):
            return "Paired \"\(name)\" by \(method == "qr" ? "QR code" : "PIN")."
        case .pairingFailed(let reason):
            return Self.pairingFailure(reason)
        case .storeFailed(let what, let reason):
            return "⚠️  The monitor's database failed: it could not \(what) (\(reason)). Check the disk and the "
                + "data directory; the monitor goes on."
        case .eventNotLogged(let seq, let reason):
            return "Alert #\(seq) could not be saved: \(reason). Connected listeners were alerted now; "
                + "they cannot replay it later."
        case .noise(let seq, _, let peak, _):
            return "Noise #\(seq): peak level \(peak) — alert sent to connected listeners."
        case .listenerConnected(let fingerprint, let id, let trusted):
            return trusted
                ? "Listener \(id ?? fingerprint) connected." : "An unpaired device connected (pairing only)."
        case .unpairedConnections(let count, let within):
            let devices = count == 1 ? "1 more unpaired device" : "\(count) more unpaired devices"
            return "\(devices) connected within \(within.components.seconds) s (pairing only; closed unless they pair)."
        case .listenerDisconnected(let fingerprint, let id, _):
            return "Listener \(id ?? fingerprint) disconnected."
        case .listenerRevoked(let id):
            return "Listener \(id) was revoked and disconnected."
        case .settingsChanged(let settings):
            return "Settings now in force: name \"\(settings.monitorName)\", threshold \(settings.threshold), "
                + "minimum \(settings.minDurationMs) ms, cooldown \(settings.cooldownSec) s."
        case .monitoringSwitched(let on):
            return on
                ? "Monitoring is ON: noise and safety alerts go to paired listeners again."
                : "Monitoring is OFF: no alert is raised and no stream started until it is on again "
                    + "(`cribcall settings set monitoring=on`); paired listeners were told."
        case .streamStarted(_, let listenerId, let mediaType, let automatic):
            return "Streaming \(mediaType.displayName) to listener \(listenerId)"
                + (automatic ? " (automatic, after noise)." : ".")
        case .streamEnded(let sessionId, let reason):
            return "Stream \(sessionId.prefix(8)) ended (\(reason))."
        case .safetyStatus(let status):
            return SafetyWording.status(
                status.monitoring, reason: status.reason, movement: status.movement, position: status.position,
                faceVisible: status.faceVisible)
        case .cannotJudge(let reason, let minutes):
            return "Safety monitoring has not been able to judge for \(minutes) minutes (\(reason)): no safety alert "
                + "can be raised until it can. Check the camera, its light and the sleep area."
        case .judgingAgain:
            return "Safety monitoring judges again."
        case .safetyAlert(let alert):
            let words = SafetyWording.alert(alert.kind)
            return "\(SafetyWording.tag(alert.kind, severity: alert.severity)): \(words.title). \(words.detail) "
                + "(sent to connected listeners)"
        case .alertUpdated(let update):
            return SafetyWording.update(update.state, by: update.by)
        }
    }

    /// A failed pairing in words for the person at the monitor, with what to do.
    static func pairingFailure(_ reason: String) -> String {
        switch reason {
        case PairRejected.Reason.invalidPIN.rawValue:
            return "A wrong PIN was entered on the listener."
        case PairRejected.Reason.expired.rawValue:
            return "The PIN expired before it was entered: pair again from the listener for a new one."
        case PairRejected.Reason.locked.rawValue:
            return "PIN pairing is locked after \(PINPairingMonitor.lockThreshold) failed pairings in a row: "
                + "`cribcall pairing unlock` opens it again (pairing by QR code still works)."
        case PairRejected.Reason.invalidToken.rawValue:
            return "A listener used a pairing QR code that is not valid (expired, used or replaced): show a new one."
        case PairRejected.Reason.fingerprintMismatch.rawValue:
            return "Pairing failed: the listener's identity did not match what it claimed."
        case "listener_id_taken":
            return "Pairing failed: another device is paired under that listener's id."
        default:
            return "Pairing failed: \(reason)."
        }
    }
}
