/// The TXT record of a monitor's DNS-SD service (PROTOCOL.md §10) as key/value entries; the DNS-SD adapter puts them
/// on the wire.
///
/// Reading is strict: a record without `monitorId` or with a malformed `monitorCertFingerprint` (64 lowercase hex)
/// is no monitor, so a stray service never becomes one.
public struct MonitorTXTRecord: Sendable, Hashable {
    public var monitorId: String
    public var monitorName: String?
    public var certFingerprint: String
    public var version: Int?
    public var servicePort: Int?

    /// The record a monitor advertises.
    public init(_ advertisement: MonitorAdvertisement) {
        monitorId = advertisement.monitorId
        monitorName = advertisement.monitorName
        certFingerprint = advertisement.certFingerprint
        version = advertisement.version
        servicePort = advertisement.port
    }

    /// The entries in their advertised order.
    public var entries: [(key: String, value: String)] {
        var entries: [(key: String, value: String)] = [("monitorId", monitorId)]
        if let monitorName { entries.append(("monitorName", monitorName)) }
        entries.append(("monitorCertFingerprint", certFingerprint))
        if let version { entries.append(("version", String(version))) }
        if let servicePort { entries.append(("servicePort", String(servicePort))) }
        return entries
    }

    /// Reads a received record.
    ///
    /// - Parameter value: The value of a key in the record (keys compare case-insensitively and the first
    ///   occurrence counts, RFC 6763 §6.4: the DNS-SD adapter's lookup), nil when absent.
    /// - Returns: nil when `monitorId` is missing or empty, or the fingerprint is not 64 lowercase hex digits.
    public init?(value: (String) -> String?) {
        guard let monitorId = value("monitorId"), !monitorId.isEmpty,
            let fingerprint = value("monitorCertFingerprint"), Self.isFingerprint(fingerprint)
        else { return nil }
        self.monitorId = monitorId
        self.certFingerprint = fingerprint
        self.monitorName = value("monitorName").flatMap { $0.isEmpty ? nil : $0 }
        self.version = value("version").flatMap { Int($0) }
        self.servicePort = value("servicePort").flatMap { Int($0) }.flatMap { (1...65_535).contains($0) ? $0 : nil }
    }

    /// Whether `text` is 64 lowercase hex digits.
    static func isFingerprint(_ text: String) -> Bool {
        let utf8 = text.utf8
        return utf8.count == 64
            && utf8.allSatisfy {
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                    || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0)
            }
    }
}
