public import CribCallProtocol

/// What the listener reports to its user (terminal text or `--json` lines).
public enum ListenerEvent: Sendable, Hashable {
    /// Connected (or reconnected) to a paired monitor.
    case connected(monitorId: String, monitorName: String, address: String)
    /// A noise alert (live or replayed after a link loss).
    case noise(monitorId: String, monitorName: String, event: NoiseEvent)
    /// Nothing heard from the monitor for 15 s: the parent must be told.
    case linkLost(monitorId: String, monitorName: String, reason: String)
    /// The monitor is back after a link loss.
    case linkRestored(monitorId: String, monitorName: String)
    /// The monitor no longer trusts this listener (revoked or unpaired there).
    case unauthorized(monitorId: String, monitorName: String, message: String)
    /// Media of a live stream flows (one opened with `openStream`, or a monitor's automatic stream after noise).
    case streamStarted(monitorId: String, sessionId: String, mediaType: MediaType)
    /// The monitor stops this automatic stream in `secondsRemaining` seconds unless it is pinned.
    case streamEndingSoon(monitorId: String, sessionId: String, secondsRemaining: Int)
    /// A live stream ended. `reason`: `ended_by_listener`, `ended_by_monitor` (also when its time was up),
    /// `link_lost`, or `media_failed: <details>`.
    case streamEnded(monitorId: String, sessionId: String, reason: String)
    /// Whether monitoring is switched on at the monitor (MONITOR_STATE): said for the first in a run and for each
    /// change (`changed`). While `off` no alert can come from it.
    case monitoring(monitorId: String, monitorName: String, state: MonitoringSwitch, changed: Bool)
    /// The monitor's safety judgement changed (CribAlert, PROTOCOL.md §11). After a lost link the last one is no
    /// longer current: a display must show it as unknown until the next arrives.
    case safetyStatus(monitorId: String, monitorName: String, status: SafetyStatus)
    /// A safety alert (live, with its evidence picture if any; or replayed after a link loss, without).
    case safetyAlert(monitorId: String, monitorName: String, alert: SafetyAlert)
    /// Someone acted on an alert (this listener or another).
    case alertUpdated(monitorId: String, monitorName: String, update: AlertUpdated)
    /// While the link was down the monitor logged `count` alerts it no longer keeps (PROTOCOL.md §8: the last
    /// 1,000, or a day's): they cannot be replayed; those it kept follow.
    case alertsNotKept(monitorId: String, monitorName: String, count: Int64)
    /// This listener's database failed: it could not do `what` (said once until the same work succeeds again).
    /// Alerts still arrive; what is lost is said in `what`.
    case storeFailed(what: String, reason: String)
}
