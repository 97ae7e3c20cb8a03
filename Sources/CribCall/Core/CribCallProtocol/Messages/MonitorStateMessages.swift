// Whether the monitor watches over the room at all: the seed's "Monitoring: ON/OFF" (Monitor Home's Start/Stop
// monitoring), told to every paired listener so that nobody believes a switched-off monitor still listens.

/// Whether monitoring is switched on at the monitor.
public enum MonitoringSwitch: String, Sendable, Hashable, Codable, CaseIterable {
    /// Sound and safety detections run, alerts go out, listeners may stream.
    case on
    /// Switched off by someone at the monitor: no NOISE_EVENT, no SAFETY_ALERT, no stream until it is on again.
    case off
}

/// `MONITOR_STATE` (monitor → listener): sent to each trusted listener as soon as its control stream is open (and
/// right after PAIR_ACCEPTED), and to every connected one whenever the switch changes. A listener that does not know
/// the type ignores it (PROTOCOL.md §4: a trusted unknown type keeps the connection).
public struct MonitorState: Sendable, Hashable, Codable {
    public var monitoring: MonitoringSwitch

    public init(monitoring: MonitoringSwitch) {
        self.monitoring = monitoring
    }
}
