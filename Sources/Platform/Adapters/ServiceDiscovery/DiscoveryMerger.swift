/// Merges what a browser learns about individual DNS-SD service instances into monitors keyed by `monitorId`,
/// and says which ``DiscoveryEvent``s that changes. Pure: no I/O, no C, tested without a network.
struct DiscoveryMerger: Sendable {
    /// One service instance: a name under one service type on one interface.
    struct InstanceKey: Hashable, Sendable, Comparable {
        var serviceType: String
        var name: String
        var interfaceIndex: UInt32

        static func < (lhs: InstanceKey, rhs: InstanceKey) -> Bool {
            (lhs.serviceType, lhs.name, lhs.interfaceIndex) < (rhs.serviceType, rhs.name, rhs.interfaceIndex)
        }
    }

    /// What is known about one instance so far.
    struct Instance: Sendable, Hashable {
        var record: MonitorTXTRecord?
        var port: Int?
        var addresses: Set<String> = []
    }

    private var instances: [InstanceKey: Instance] = [:]
    private var published: [String: DiscoveredMonitor] = [:]

    /// Changes an instance (creating it when new).
    ///
    /// - Returns: The events this causes, in order.
    mutating func update(_ key: InstanceKey, _ change: (inout Instance) -> Void) -> [DiscoveryEvent] {
        let before = instances[key]?.record?.monitorId
        change(&instances[key, default: Instance()])
        let after = instances[key]?.record?.monitorId
        return recompute([before, after].compactMap { $0 })
    }

    /// Forgets an instance.
    ///
    /// - Returns: The events this causes.
    mutating func remove(_ key: InstanceKey) -> [DiscoveryEvent] {
        guard let removed = instances.removeValue(forKey: key) else { return [] }
        return recompute([removed.record?.monitorId].compactMap { $0 })
    }

    private mutating func recompute(_ monitorIds: [String]) -> [DiscoveryEvent] {
        var events: [DiscoveryEvent] = []
        for monitorId in Set(monitorIds).sorted() {
            let merged = merge(monitorId)
            switch (published[monitorId], merged) {
            case (nil, nil):
                break
            case (nil, let monitor?):
                events.append(.found(monitor))
            case (_?, nil):
                events.append(.lost(monitorId: monitorId))
            case (let old?, let monitor?) where old != monitor:
                events.append(.updated(monitor))
            case (_?, _?):
                break
            }
            published[monitorId] = merged
        }
        return events
    }

    /// The monitor as seen through all its usable instances: a valid TXT record, a port and an address.
    private func merge(_ monitorId: String) -> DiscoveredMonitor? {
        let usable =
            instances
            .filter { $0.value.record?.monitorId == monitorId && $0.value.port != nil && !$0.value.addresses.isEmpty }
            .sorted { $0.key < $1.key }
        guard let (firstKey, first) = usable.first, let record = first.record, let port = first.port else {
            return nil
        }
        return DiscoveredMonitor(
            monitorId: monitorId,
            monitorName: record.monitorName ?? firstKey.name,
            certFingerprint: record.certFingerprint,
            port: record.servicePort ?? port,
            hosts: Set(usable.flatMap(\.value.addresses)).sorted(),
            serviceTypes: Set(usable.map(\.key.serviceType))
        )
    }
}
