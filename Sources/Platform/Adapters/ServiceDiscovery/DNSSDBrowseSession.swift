import CDNSSD
import Dispatch

/// One ``DNSSDServiceDiscovery/browse()``: browses both service types, then for each instance resolves it
/// (SRV + TXT), follows its TXT record and queries its host's A/AAAA records (Avahi's compat layer has no
/// `DNSServiceGetAddrInfo`), and feeds everything to a ``DiscoveryMerger``.
final class DNSSDBrowseSession: @unchecked Sendable {
    // Safe: every stored var is only read and written on `queue` (all entry points run there: `start` and `stop`
    // are dispatched onto it, callbacks are delivered on it); `queue` and `continuation` are immutable and the
    // continuation is thread-safe.
    private let queue: DispatchQueue
    private let continuation: AsyncThrowingStream<DiscoveryEvent, any Error>.Continuation
    private var browses: [DNSServiceOperation] = []
    private var lookups: [DiscoveryMerger.InstanceKey: InstanceLookup] = [:]
    private var merger = DiscoveryMerger()
    private var stopped = false
    /// Monitors whose last instance went away, reported as lost unless they come back within `lostGrace` (a
    /// rename withdraws the old instance name before the new one is probed and announced).
    private var pendingLost: [String: DispatchWorkItem] = [:]
    private let lostGrace: Duration

    /// The dns_sd operations following one service instance.
    private final class InstanceLookup {
        var resolve: DNSServiceOperation?
        var txt: DNSServiceOperation?
        var addresses: [DNSServiceOperation] = []
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
        lostGrace: Duration,
        continuation: AsyncThrowingStream<DiscoveryEvent, any Error>.Continuation
    ) {
        self.queue = queue
        self.lostGrace = lostGrace
        self.continuation = continuation
    }

    func start() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !stopped else { return }
        for serviceType in DNSSDServiceDiscovery.serviceTypes {
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
        for item in pendingLost.values { item.cancel() }
        pendingLost = [:]
    }

    private func fail(_ error: ServiceDiscoveryError) {
        stop()
        continuation.finish(throwing: error)
    }

    private func emit(_ events: [DiscoveryEvent]) {
        for event in events {
            switch event {
            case .lost(let monitorId):
                let item = DispatchWorkItem { [weak self] in
                    guard let self, self.pendingLost.removeValue(forKey: monitorId) != nil else { return }
                    self.continuation.yield(event)
                }
                pendingLost[monitorId] = item
                let milliseconds = Int(
                    lostGrace.components.seconds * 1000 + lostGrace.components.attoseconds / 1_000_000_000_000_000)
                queue.asyncAfter(deadline: .now() + .milliseconds(milliseconds), execute: item)
            case .found(let monitor) where pendingLost[monitor.monitorId] != nil:
                pendingLost.removeValue(forKey: monitor.monitorId)?.cancel()
                continuation.yield(.updated(monitor))
            default:
                continuation.yield(event)
            }
        }
    }

    private func handleBrowse(_ reply: DNSSDReply, _ serviceType: String) {
        guard !stopped else { return }
        switch reply {
        case .browsed(let added, let interfaceIndex, let error, let name, _, let domain)
        where error == cdnssd_no_error():
            let key = DiscoveryMerger.InstanceKey(serviceType: serviceType, name: name, interfaceIndex: interfaceIndex)
            if added {
                guard lookups[key] == nil else { return }
                let lookup = InstanceLookup()
                lookups[key] = lookup
                startResolve(key, lookup, domain: domain)
            } else {
                lookups.removeValue(forKey: key)?.cancel()
                emit(merger.remove(key))
            }
        case .browsed(_, _, let error, _, _, _):
            fail(DNSSDCallError(code: error).publicError(.browseFailed, "browse \(serviceType)"))
        case .failed(let error):
            fail(error.publicError(.browseFailed, "browse \(serviceType)"))
        default:
            break
        }
    }

    private func startResolve(_ key: DiscoveryMerger.InstanceKey, _ lookup: InstanceLookup, domain: String) {
        let context = DNSSDCallbackContext { [weak self, weak lookup] reply in
            guard let self, let lookup, !self.stopped else { return }
            self.handleResolve(reply, key, lookup)
        }
        let result = DNSServiceOperation.start(on: queue, context: context) { ref, context in
            DNSServiceResolve(
                ref, 0, key.interfaceIndex, key.name, key.serviceType, domain, DNSSDCallbacks.resolve, context
            )
        }
        // A single instance that cannot be resolved is skipped; the browse goes on.
        lookup.resolve = try? result.get()
    }

    private func handleResolve(_ reply: DNSSDReply, _ key: DiscoveryMerger.InstanceKey, _ lookup: InstanceLookup) {
        guard case .resolved(let interfaceIndex, let error, let fullName, let host, let port, let txt) = reply,
            error == cdnssd_no_error()
        else { return }
        // One answer is enough: the TXT query below follows later changes.
        lookup.resolve?.cancel()
        lookup.resolve = nil
        if lookup.liveTXT.isEmpty { lookup.liveTXT = [txt] }
        emit(
            merger.update(key) { instance in
                instance.port = Int(port)
                instance.record = MonitorTXTRecord(parsing: txt)
            })
        lookup.txt = startQuery(fullName, AddressRecord.typeTXT, interfaceIndex, key, lookup)
        lookup.addresses = [AddressRecord.typeA, AddressRecord.typeAAAA].compactMap { type in
            startQuery(host, type, interfaceIndex, key, lookup)
        }
    }

    private func startQuery(
        _ name: String,
        _ type: UInt16,
        _ interfaceIndex: UInt32,
        _ key: DiscoveryMerger.InstanceKey,
        _ lookup: InstanceLookup
    ) -> DNSServiceOperation? {
        let context = DNSSDCallbackContext { [weak self, weak lookup] reply in
            guard let self, let lookup, !self.stopped else { return }
            self.handleRecord(reply, key, lookup)
        }
        let result = DNSServiceOperation.start(on: queue, context: context) { ref, context in
            let classIN: UInt16 = 1
            return DNSServiceQueryRecord(
                ref, 0, interfaceIndex, name, type, classIN, DNSSDCallbacks.queryRecord, context)
        }
        return try? result.get()
    }

    private func handleRecord(_ reply: DNSSDReply, _ key: DiscoveryMerger.InstanceKey, _ lookup: InstanceLookup) {
        guard case .record(let added, let interfaceIndex, let error, _, let type, let data) = reply,
            error == cdnssd_no_error()
        else { return }
        if type == AddressRecord.typeTXT {
            if added {
                lookup.liveTXT.removeAll { $0 == data }
                lookup.liveTXT.append(data)
            } else {
                // Keep the last one known: the instance itself goes away through the browse.
                if lookup.liveTXT.count > 1 { lookup.liveTXT.removeAll { $0 == data } }
            }
            guard let txt = lookup.liveTXT.last else { return }
            emit(merger.update(key) { $0.record = MonitorTXTRecord(parsing: txt) })
        } else if let literal = AddressRecord.literal(data, interfaceIndex: interfaceIndex) {
            if added { lookup.liveAddresses.insert(literal) } else { lookup.liveAddresses.remove(literal) }
            let addresses = lookup.liveAddresses
            emit(merger.update(key) { $0.addresses = addresses })
        }
    }
}
