/// A monitor found on the network, merged by `monitorId` across `_baby-monitor._udp`, `_baby-monitor._tcp` and
/// network interfaces.
public struct DiscoveredMonitor: Sendable, Hashable {
    /// The monitor's stable identifier (TXT `monitorId`).
    public var monitorId: String
    /// The human name (TXT `monitorName`, or the instance name when the TXT has none).
    public var monitorName: String
    /// The certificate fingerprint to pin: 64 lowercase hex digits (TXT `monitorCertFingerprint`).
    public var certFingerprint: String
    /// The control port (TXT `servicePort`, or the SRV port when the TXT has none).
    public var port: Int
    /// IPv4/IPv6 literal addresses from A/AAAA records, sorted; IPv6 link-local ones carry `%interface`.
    public var hosts: [String]
    /// The service types it was seen under, e.g. `_baby-monitor._udp`.
    public var serviceTypes: Set<String>

    /// Creates a discovered monitor.
    public init(
        monitorId: String,
        monitorName: String,
        certFingerprint: String,
        port: Int,
        hosts: [String],
        serviceTypes: Set<String>
    ) {
        self.monitorId = monitorId
        self.monitorName = monitorName
        self.certFingerprint = certFingerprint
        self.port = port
        self.hosts = hosts
        self.serviceTypes = serviceTypes
    }
}
