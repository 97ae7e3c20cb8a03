/// Merges the DNS-SD service instances a browser sees into monitors keyed by `monitorId` and certificate
/// fingerprint (PROTOCOL.md §10: both service types, every network interface, renames), and says which
/// ``DiscoveryEvent``s each new view causes. Anyone on the LAN can announce any `monitorId`: a stranger announcing
/// a paired monitor's id with another fingerprint is a monitor of its own, never merged into the real one (whose
/// port and fingerprint it would otherwise hide).
public struct DiscoveryMerger: Sendable {
    /// One resolved service instance: a name under one service type on one interface, and what it announces.
    public struct Instance: Sendable, Hashable {
        public var serviceType: String
        public var name: String
        public var interfaceIndex: UInt32
        /// Its TXT record read as a monitor's; nil when it is not one.
        public var record: MonitorTXTRecord?
        /// The SRV port.
        public var port: Int
        /// Address literals; a monitor needs at least one.
        public var addresses: [String]

        public init(
            serviceType: String, name: String, interfaceIndex: UInt32, record: MonitorTXTRecord?, port: Int,
            addresses: [String]
        ) {
            self.serviceType = serviceType
            self.name = name
            self.interfaceIndex = interfaceIndex
            self.record = record
            self.port = port
            self.addresses = addresses
        }
    }

    private var published: [String: DiscoveredMonitor] = [:]

    public init() {}

    /// Takes everything the browser sees now.
    ///
    /// - Returns: What changed since the last view, in `monitorId` order: a monitor `found` once one instance has a
    ///   monitor's TXT record and an address, `updated` when what it shows changes, `lost` with its last instance.
    public mutating func update(_ instances: [Instance]) -> [DiscoveryEvent] {
        let monitors = Self.merge(instances)
        var events: [DiscoveryEvent] = []
        for key in Set(published.keys).union(monitors.keys).sorted() {
            switch (published[key], monitors[key]) {
            case (nil, let monitor?):
                events.append(.found(monitor))
            case (let old?, nil):
                events.append(.lost(monitorId: old.monitorId))
            case (let old?, let monitor?) where old != monitor:
                events.append(.updated(monitor))
            default:
                break
            }
        }
        published = monitors
        return events
    }

    /// Each monitor as seen through all its usable instances: a monitor's TXT record and an address. Name and port
    /// come from its first instance, by service type, name and interface.
    private static func merge(_ instances: [Instance]) -> [String: DiscoveredMonitor] {
        let usable = instances.filter { $0.record != nil && !$0.addresses.isEmpty }.sorted {
            ($0.serviceType, $0.name, $0.interfaceIndex) < ($1.serviceType, $1.name, $1.interfaceIndex)
        }
        let byMonitor = Dictionary(grouping: usable) { instance in
            instance.record.map { "\($0.monitorId)|\($0.certFingerprint)" } ?? ""
        }
        return byMonitor.compactMapValues { instances in
            guard let first = instances.first, let record = first.record else { return nil }
            return DiscoveredMonitor(
                monitorId: record.monitorId,
                monitorName: record.monitorName ?? first.name,
                certFingerprint: record.certFingerprint,
                port: record.servicePort ?? first.port,
                hosts: Set(instances.flatMap(\.addresses)).sorted(),
                serviceTypes: Set(instances.map(\.serviceType))
            )
        }
    }
}
