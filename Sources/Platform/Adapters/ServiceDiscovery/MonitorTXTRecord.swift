/// The TXT record of a monitor's DNS-SD service (PROTOCOL.md §10), encoded and parsed without the C library.
///
/// Wire format (RFC 6763 §6): a sequence of strings, each one length byte then `key=value`; at most 255 bytes
/// per string. Parsing is strict and bounded: a record without `monitorId` or with a malformed
/// `monitorCertFingerprint` (64 lowercase hex) is rejected, so a stray service never becomes a monitor.
struct MonitorTXTRecord: Sendable, Hashable {
    /// The largest TXT record this module parses; real ones are ~200 bytes.
    static let maximumLength = 8_900

    var monitorId: String
    var monitorName: String?
    var certFingerprint: String
    var version: Int?
    var servicePort: Int?

    init(_ advertisement: MonitorAdvertisement) {
        monitorId = advertisement.monitorId
        monitorName = advertisement.monitorName
        certFingerprint = advertisement.certFingerprint
        version = advertisement.version
        servicePort = advertisement.port
    }

    /// The entries in their advertised order.
    var entries: [(key: String, value: String)] {
        var entries: [(key: String, value: String)] = [("monitorId", monitorId)]
        if let monitorName { entries.append(("monitorName", monitorName)) }
        entries.append(("monitorCertFingerprint", certFingerprint))
        if let version { entries.append(("version", String(version))) }
        if let servicePort { entries.append(("servicePort", String(servicePort))) }
        return entries
    }

    /// The wire bytes.
    ///
    /// - Throws: ``ServiceDiscoveryError/Code/invalidAdvertisement`` when an entry exceeds 255 bytes.
    func encoded() throws(ServiceDiscoveryError) -> [UInt8] {
        var bytes: [UInt8] = []
        for (key, value) in entries {
            let entry = Array("\(key)=\(value)".utf8)
            guard entry.count <= 255 else {
                throw ServiceDiscoveryError(
                    code: .invalidAdvertisement,
                    message: "the TXT entry \(key) is \(entry.count) bytes; DNS-SD allows 255: shorten it"
                )
            }
            bytes.append(UInt8(entry.count))
            bytes.append(contentsOf: entry)
        }
        return bytes
    }

    /// Parses TXT wire bytes.
    ///
    /// - Returns: nil when the record is malformed, too long, lacks `monitorId`, or its fingerprint is not 64
    ///   lowercase hex digits.
    init?(parsing bytes: [UInt8]) {
        guard bytes.count <= Self.maximumLength else { return nil }
        var values: [String: String] = [:]
        var index = 0
        while index < bytes.count {
            let length = Int(bytes[index])
            index += 1
            guard index + length <= bytes.count else { return nil }
            let entry = bytes[index..<index + length]
            index += length
            guard let equals = entry.firstIndex(of: UInt8(ascii: "=")) else { continue }  // boolean attribute
            guard let key = String(validating: entry[entry.startIndex..<equals], as: UTF8.self),
                let value = String(validating: entry[(equals + 1)...], as: UTF8.self)
            else { return nil }
            // RFC 6763 §6.4: keys are case-insensitive and only the first occurrence counts.
            let normalized = key.lowercased()
            if values[normalized] == nil { values[normalized] = value }
        }
        guard let monitorId = values["monitorid"], !monitorId.isEmpty,
            let fingerprint = values["monitorcertfingerprint"], Self.isFingerprint(fingerprint)
        else { return nil }
        self.monitorId = monitorId
        self.certFingerprint = fingerprint
        self.monitorName = values["monitorname"].flatMap { $0.isEmpty ? nil : $0 }
        self.version = values["version"].flatMap { Int($0) }
        self.servicePort = values["serviceport"].flatMap { Int($0) }.flatMap { (1...65_535).contains($0) ? $0 : nil }
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
