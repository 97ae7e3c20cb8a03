/// What a monitor advertises on the LAN (PROTOCOL.md §10).
///
/// The DNS-SD instance name is `monitorName`; the TXT record (``MonitorTXTRecord``) carries `monitorId`,
/// `monitorName`, `monitorCertFingerprint`, `version` and `servicePort`. Discovery is never trust: a listener still
/// pins `certFingerprint` when it connects.
public struct MonitorAdvertisement: Sendable, Hashable {
    /// The service types a monitor registers and a listener browses: `_udp` is correct for QUIC (RFC 6763 §7),
    /// `_tcp` is the seed's.
    public static let serviceTypes = ["_baby-monitor._udp", "_baby-monitor._tcp"]

    /// The monitor's stable identifier.
    public var monitorId: String
    /// The human name, also used as the DNS-SD instance name.
    public var monitorName: String
    /// SHA-256 of the monitor's certificate: 64 lowercase hex digits.
    public var certFingerprint: String
    /// The QUIC control port.
    public var port: Int
    /// The discovery protocol version (TXT `version`).
    public var version: Int

    /// Creates an advertisement.
    public init(monitorId: String, monitorName: String, certFingerprint: String, port: Int, version: Int = 1) {
        self.monitorId = monitorId
        self.monitorName = monitorName
        self.certFingerprint = certFingerprint
        self.port = port
        self.version = version
    }
}
