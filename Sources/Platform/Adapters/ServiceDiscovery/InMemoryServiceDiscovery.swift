import Synchronization

/// An in-memory twin of ``DNSSDServiceDiscovery`` for service tests: advertisements made through an instance
/// are visible to browsers of the same instance, under both service types, at `hosts`.
public final class InMemoryServiceDiscovery: ServiceAdvertiser, ServiceBrowser {
    private struct State {
        var nextId = 0
        var advertisements: [Int: MonitorAdvertisement] = [:]
        var browsers: [Int: AsyncThrowingStream<DiscoveryEvent, any Error>.Continuation] = [:]
        var merger = DiscoveryMerger()
    }

    private let hosts: [String]
    private let state = Mutex(State())

    /// Creates an empty network.
    ///
    /// - Parameter hosts: The addresses every advertised monitor appears at.
    public init(hosts: [String] = ["127.0.0.1"]) {
        self.hosts = hosts
    }

    public func advertise(
        _ advertisement: MonitorAdvertisement
    ) async throws(ServiceDiscoveryError) -> any AdvertisementHandle {
        _ = try MonitorTXTRecord(advertisement).encoded()
        let id = state.withLock { state in
            state.nextId += 1
            return state.nextId
        }
        set(id, advertisement)
        return Handle(network: self, id: id)
    }

    public func browse() -> AsyncThrowingStream<DiscoveryEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream<DiscoveryEvent, any Error>.makeStream()
        let id = state.withLock { state in
            state.nextId += 1
            state.browsers[state.nextId] = continuation
            // Replay what is already advertised as `found` events, like a fresh mDNS browse does.
            var replay = DiscoveryMerger()
            for (key, instance) in Self.instances(state.advertisements, hosts: hosts) {
                for event in replay.update(key, { $0 = instance }) { continuation.yield(event) }
            }
            return state.nextId
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.browsers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Publishes (or, with nil, withdraws) advertisement `id` and tells every browser what changed.
    fileprivate func set(_ id: Int, _ advertisement: MonitorAdvertisement?) {
        state.withLock { state in
            let old = state.advertisements[id]
            state.advertisements[id] = advertisement
            var events: [DiscoveryEvent] = []
            for (key, _) in Self.instances([id: old].compactMapValues { $0 }, hosts: hosts) {
                events += state.merger.remove(key)
            }
            for (key, instance) in Self.instances([id: advertisement].compactMapValues { $0 }, hosts: hosts) {
                events += state.merger.update(key) { $0 = instance }
            }
            // A rename shows up as lost + found of the same monitor; collapse it into `updated`.
            events = Self.collapse(events)
            for continuation in state.browsers.values {
                for event in events { continuation.yield(event) }
            }
        }
    }

    /// Reduces one change to at most one event per monitor, as a browser of the real network would report it:
    /// a rename (lost + found) becomes `updated`, and a monitor appearing under both types is one `found`.
    private static func collapse(_ events: [DiscoveryEvent]) -> [DiscoveryEvent] {
        var order: [String] = []
        var first: [String: DiscoveryEvent] = [:]
        var last: [String: DiscoveryEvent] = [:]
        for event in events {
            let monitorId: String
            switch event {
            case .found(let monitor), .updated(let monitor): monitorId = monitor.monitorId
            case .lost(let id): monitorId = id
            }
            if first[monitorId] == nil {
                order.append(monitorId)
                first[monitorId] = event
            }
            last[monitorId] = event
        }
        return order.compactMap { monitorId in
            switch (first[monitorId], last[monitorId]) {
            case (.found?, .updated(let monitor)?): .found(monitor)
            case (.lost?, .found(let monitor)?), (.lost?, .updated(let monitor)?): .updated(monitor)
            case (.found?, .lost?): nil
            case (_, let event): event
            }
        }
    }

    private static func instances(
        _ advertisements: [Int: MonitorAdvertisement],
        hosts: [String]
    ) -> [(DiscoveryMerger.InstanceKey, DiscoveryMerger.Instance)] {
        advertisements.sorted { $0.key < $1.key }.flatMap { id, advertisement in
            DNSSDServiceDiscovery.serviceTypes.map { serviceType in
                (
                    DiscoveryMerger.InstanceKey(serviceType: serviceType, name: "\(id)", interfaceIndex: 0),
                    DiscoveryMerger.Instance(
                        record: MonitorTXTRecord(advertisement),
                        port: advertisement.port,
                        addresses: Set(hosts)
                    )
                )
            }
        }
    }
}

extension InMemoryServiceDiscovery {
    private final class Handle: AdvertisementHandle {
        private let network: InMemoryServiceDiscovery
        private let id: Int
        private let cancelled = Mutex(false)

        init(network: InMemoryServiceDiscovery, id: Int) {
            self.network = network
            self.id = id
        }

        func update(_ advertisement: MonitorAdvertisement) async throws(ServiceDiscoveryError) {
            _ = try MonitorTXTRecord(advertisement).encoded()
            guard !cancelled.withLock({ $0 }) else { return }
            network.set(id, advertisement)
        }

        func cancel() async {
            let wasCancelled = cancelled.withLock { cancelled in
                defer { cancelled = true }
                return cancelled
            }
            if !wasCancelled { network.set(id, nil) }
        }
    }
}
