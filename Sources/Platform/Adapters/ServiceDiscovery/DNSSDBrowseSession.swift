import CDNSSD
import Dispatch

/// One ``DNSSDServiceDiscovery/browse(_:)``: browses every type, then for each instance resolves it (SRV + TXT),
/// follows its TXT record and queries its host's A/AAAA records (Avahi's compat layer has no
/// `DNSServiceGetAddrInfo`), and yields the resolved instances after each change.
final class DNSSDBrowseSession: @unchecked Sendable {
    // Safe: every stored var is only read and written on `queue` (all entry points run there: `start` and `stop`
    // are dispatched onto it, callbacks are delivered on it); `queue`, `types` and `continuation` are immutable and
    // the continuation is thread-safe.
    private let queue: DispatchQueue
    private let types: [String]
    private let continuation: AsyncThrowingStream<[ServiceInstance], any Error>.Continuation
    private var browses: [DNSServiceOperation] = []
    private var lookups: [ServiceInstance.ID: InstanceLookup] = [:]
    /// What was yielded last: only a change is yielded again.
    private var published: [ServiceInstance] = []
    private var stopped = false

    /// The dns_sd operations following one service instance, and what they learnt.
    private final class InstanceLookup {
        var resolve: DNSServiceOperation?
        var txt: DNSServiceOperation?
        var addresses: [DNSServiceOperation] = []
        /// The SRV port, once resolved.
        var port: Int?
        /// TXT records currently announced, oldest first (a change may announce the new one before the old
        /// one's goodbye).
        var liveTXT: [[UInt8]] = []
        var liveAddresses: Set<String> = []

        func cancel() {
            resolve?.cancel()
            txt?.cancel()
            for operation in addresses { operation.cancel() }
            resolve = nil
            txt = nil
            addresses = []
        }
    }

    init(
        queue: DispatchQueue,
        types: [String],
        continuation: AsyncThrowingStream<[ServiceInstance], any Error>.Continuation
    ) {
        self.queue = queue
        self.types = types
        self.continuation = continuation
    }

    func start() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !stopped else { return }
        for serviceType in types {
            let context = DNSSDCallbackContext { [weak self] reply in self?.handleBrowse(reply, serviceType) }
            let result = DNSServiceOperation.start(on: queue, context: context) { ref, context in
                DNSServiceBrowse(ref, 0, 0, serviceType, DNSSDServiceDiscovery.domain, DNSSDCallbacks.browse, context)
            }
            switch result {
            case .success(let operation):
                browses.append(operation)
            case .failure(let error):
                fail(error.publicError(.browseFailed, "browse \(serviceType)"))
                return
            }
        }
    }

    func stop() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !stopped else { return }
        stopped = true
        for operation in browses { operation.cancel() }
        browses = []
        for lookup in lookups.values { lookup.cancel() }
        lookups = [:]
    }

    private func fail(_ error: ServiceDiscoveryError) {
        stop()
        continuation.finish(throwing: error)
    }

    /// Yields the resolved instances if they changed since the last time.
    private func publish() {
        let instances = lookups.compactMap { id, lookup -> ServiceInstance? in
            guard let port = lookup.port else { return nil }
            let txt = lookup.liveTXT.last.flatMap { TXTRecord(parsing: $0) } ?? TXTRecord()
            return ServiceInstance(id: id, port: port, txt: txt, addresses: lookup.liveAddresses.sorted())
        }.sorted { $0.id < $1.id }
        guard instances != published else { return }
        published = instances
        continuation.yield(instances)
    }

    private func handleBrowse(_ reply: DNSSDReply, _ serviceType: String) {
        guard !stopped else { return }
        switch reply {
        case .browsed(let added, let interfaceIndex, let error, let name, _, let domain)
        where error == cdnssd_no_error():
            let id = ServiceInstance.ID(type: serviceType, name: name, interfaceIndex: interfaceIndex)
            if added {
                guard lookups[id] == nil else { return }
                let lookup = InstanceLookup()
                lookups[id] = lookup
                startResolve(id, lookup, domain: domain)
            } else {
                lookups.removeValue(forKey: id)?.cancel()
                publish()
            }
        case .browsed(_, _, let error, _, _, _):
            fail(DNSSDCallError(code: error).publicError(.browseFailed, "browse \(serviceType)"))
        case .failed(let error):
            fail(error.publicError(.browseFailed, "browse \(serviceType)"))
        default:
            break
        }
    }

    private func startResolve(_ id: ServiceInstance.ID, _ lookup: InstanceLookup, domain: String) {
        let context = DNSSDCallbackContext { [weak self, weak lookup] reply in
            guard let self, let lookup, !self.stopped else { return }
            self.handleResolve(reply, lookup)
        }
        let result = DNSServiceOperation.start(on: queue, context: context) { ref, context in
            DNSServiceResolve(ref, 0, id.interfaceIndex, id.name, id.type, domain, DNSSDCallbacks.resolve, context)
        }
        // A single instance that cannot be resolved is skipped; the browse goes on.
        lookup.resolve = try? result.get()
    }

    private func handleResolve(_ reply: DNSSDReply, _ lookup: InstanceLookup) {
        guard case .resolved(let interfaceIndex, let error, let fullName, let host, let port, let txt) = reply,
            error == cdnssd_no_error()
        else { return }
        // One answer is enough: the TXT query below follows later changes.
        lookup.resolve?.cancel()
        lookup.resolve = nil
        if lookup.liveTXT.isEmpty { lookup.liveTXT = [txt] }
        lookup.port = Int(port)
        publish()
        lookup.txt = startQuery(fullName, AddressRecord.typeTXT, interfaceIndex, lookup)
        lookup.addresses = [AddressRecord.typeA, AddressRecord.typeAAAA].compactMap { type in
            startQuery(host, type, interfaceIndex, lookup)
        }
    }

    private func startQuery(
        _ name: String,
        _ type: UInt16,
        _ interfaceIndex: UInt32,
        _ lookup: InstanceLookup
    ) -> DNSServiceOperation? {
        let context = DNSSDCallbackContext { [weak self, weak lookup] reply in
            guard let self, let lookup, !self.stopped else { return }
            self.handleRecord(reply, lookup)
        }
        let result = DNSServiceOperation.start(on: queue, context: context) { ref, context in
            let classIN: UInt16 = 1
            return DNSServiceQueryRecord(
                ref, 0, interfaceIndex, name, type, classIN, DNSSDCallbacks.queryRecord, context)
        }
        return try? result.get()
    }

    private func handleRecord(_ reply: DNSSDReply, _ lookup: InstanceLookup) {
        guard case .record(let added, let interfaceIndex, let error, _, let type, let data) = reply,
            error == cdnssd_no_error()
        else { return }
        if type == AddressRecord.typeTXT {
            if added {
                lookup.liveTXT.removeAll { $0 == data }
                lookup.liveTXT.append(data)
            } else if lookup.liveTXT.count > 1 {
                // Keep the last one known: the instance itself goes away through the browse.
                lookup.liveTXT.removeAll { $0 == data }
            }
        } else if let literal = AddressRecord.literal(data, interfaceIndex: interfaceIndex) {
            if added { lookup.liveAddresses.insert(literal) } else { lookup.liveAddresses.remove(literal) }
        }
        publish()
    }
}
