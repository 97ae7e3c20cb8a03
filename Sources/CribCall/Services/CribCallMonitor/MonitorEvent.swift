public import CribCallProtocol
public import CribCallStore

/// What the monitor reports to its user interface (terminal text or `--json` lines).
public enum MonitorEvent: Sendable, Hashable {
    /// Serving on `port` under this identity.
    case ready(monitorId: String, monitorName: String, certFingerprint: String, port: Int)
    /// A QR code to show (its JSON payload and the text to encode).
    case qr(payload: QRPairingPayload, text: String)
    /// A PIN to show until `pinHidden` (PIN pairing in progress), and how many tries the listener has left with it
    /// (fewer after a wrong PIN: the same PIN is shown again).
    case pin(pin: String, pairingSessionId: String, expiresInSec: Int, attemptsRemaining: Int)
    /// Take the PIN off the screen.
    case pinHidden
    /// A listener was paired.
    case paired(listenerId: String, listenerName: String, certFingerprint: String, method: String)
    /// A pairing attempt failed.
    case pairingFailed(reason: String)
    /// A noise event was logged and sent to the connected listeners.
    case noise(seq: Int64, eventId: String, peakLevel: Int, timestamp: Int64)
    /// The event `seq` could not be kept in the log (e.g. the disk is full): it went to the connected listeners
    /// live, but cannot be replayed later. `reason` says what to do.
    case eventNotLogged(seq: Int64, reason: String)
    /// The monitor's database refused something it had to keep or read (`what`, in words, and why): said rather than
    /// swallowed, with what it means for the people using it.
    case storeFailed(what: String, reason: String)
    /// A listener connected (trusted or only able to pair).
    case listenerConnected(certFingerprint: String, listenerId: String?, trusted: Bool)
    /// `count` more devices that are not paired connected within `within` of the one reported before them (they
    /// can only pair; see ``StrangerLog``).
    case unpairedConnections(count: Int, within: Duration)
    /// A listener's connection ended.
    case listenerDisconnected(certFingerprint: String, listenerId: String?, reason: String)
    /// A trusted listener was revoked (here or from another process) and its sessions closed.
    case listenerRevoked(listenerId: String)
    /// The settings changed (here or from another process) and are in force now.
    case settingsChanged(MonitorSettings)
    /// Monitoring was switched on or off (the `monitoring` setting); paired listeners were told.
    case monitoringSwitched(on: Bool)
    /// A live stream to a listener started: asked for with START_STREAM_REQUEST, or `automatic` after a noise event.
    case streamStarted(sessionId: String, listenerId: String, mediaType: MediaType, automatic: Bool)
    /// A live stream ended; `reason` is one of ``StreamEndReason``'s tokens (a media failure adds `: <details>`).
    case streamEnded(sessionId: String, reason: String)
    /// The safety judgement changed (PROTOCOL.md §11), sent to the connected listeners.
    case safetyStatus(SafetyStatus)
    /// Safety monitoring has been unable to judge (paused or stale, `reason`) for `minutes`: no safety alert can be
    /// raised until it can. Said once per spell, while safety alerts are on.
    case cannotJudge(reason: String, minutes: Int)
    /// Safety monitoring judges again after a ``cannotJudge(reason:minutes:)``.
    case judgingAgain
    /// A safety alert was logged and sent to the connected listeners (its evidence, if any, in memory only).
    case safetyAlert(SafetyAlert)
    /// A listener acted on an alert; every listener was told.
    case alertUpdated(AlertUpdated)
}
