/// A change in the set of monitors a browser sees.
public enum DiscoveryEvent: Sendable, Hashable {
    /// A monitor appeared (it has a valid TXT record and at least one address).
    case found(DiscoveredMonitor)
    /// A known monitor changed: renamed, new address, another service type or interface.
    case updated(DiscoveredMonitor)
    /// The last instance of a monitor went away.
    case lost(monitorId: String)
}
