import Synchronization

/// An in-memory twin of ``DNSSDServiceDiscovery`` for service tests: advertisements made through an instance are
/// visible to browsers of the same instance, at `hosts`, on interface 0. Like a browser of the real network, each
/// browser sees the instances of the types it browses, once at the start and then after every change; a change
/// made by one call (an update that renames, a cancel) reaches it as one step.
public final class InMemoryServiceDiscovery: ServiceAdvertiser, ServiceBrowser {
    private struct Browser {
        let types: Set<String>
        let continuation: AsyncThrowingStream<[ServiceInstance], any Error>.Continuation
        var published: [ServiceInstance] = []
    }

    private struct State {
        var nextId = 0
        var advertisements: [Int: ServiceAdvertisement] = [:]
        var browsers: [Int: Browser] = [:]
    }

    private let hosts: [String]
    private let state = Mutex(State())

    /// Creates an empty network.
    ///
    /// - Parameter hosts: The addresses every advertised service appears at.
    public init(hosts: [String] = ["127.0.0.1"]) {
        self.hosts = hosts
    }

    public func advertise(
        _ advertisement: ServiceAdvertisement
    ) async throws(ServiceDiscoveryError) -> any AdvertisementHandle {
        _ = try advertisement.validatedTXT()
        let id = state.withLock { state in
            state.nextId += 1
            return state.nextId
        }
        set(id, advertisement)
        return Handle(network: self, id: id)
    }

    public func browse(_ types: [String]) -> AsyncThrowingStream<[ServiceInstance], any Error> {
        let (stream, continuation) = AsyncThrowingStream<[ServiceInstance], any Error>.makeStream()
        let id = state.withLock { state in
            state.nextId += 1
            state.browsers[state.nextId] = Browser(types: Set(types), continuation: continuation)
            // What is already advertised, like a fresh mDNS browse finds it.
            publish(&state)
            return state.nextId
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.browsers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Publishes (or, with nil, withdraws) advertisement `id` and tells every browser what changed.
    fileprivate func set(_ id: Int, _ advertisement: ServiceAdvertisement?) {
        state.withLock { state in
            state.advertisements[id] = advertisement
            publish(&state)
        }
    }

    /// Yields to each browser the instances of its types, when they changed since it was last told.
    private func publish(_ state: inout State) {
        let addresses = hosts.sorted()
        let all = state.advertisements.values.flatMap { advertisement in
            advertisement.types.map { type in
                ServiceInstance(
                    id: .init(type: type, name: advertisement.name, interfaceIndex: 0), port: advertisement.port,
                    txt: advertisement.txt, addresses: addresses)
            }
        }.sorted { $0.id < $1.id }
        for (id, browser) in state.browsers {
            let instances = all.filter { browser.types.contains($0.id.type) }
            guard instances != browser.published else { continue }
            state.browsers[id]?.published = instances
            browser.continuation.yield(instances)
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

        func update(_ advertisement: ServiceAdvertisement) async throws(ServiceDiscoveryError) {
            _ = try advertisement.validatedTXT()
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
