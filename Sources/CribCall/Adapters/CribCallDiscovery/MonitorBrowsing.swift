public import CribCallProtocol
public import ServiceDiscovery

extension ServiceBrowser {
    /// Finds monitors on the LAN (PROTOCOL.md §10): browses both service types and reports monitors merged by
    /// `monitorId` across types, interfaces and renames.
    ///
    /// - Parameter lostGracePeriod: How long a vanished monitor is held before it is reported lost; one that comes
    ///   back within it (e.g. renamed: a new instance name is announced after the old one is withdrawn) is reported
    ///   as updated instead.
    /// - Returns: The events; the stream ends with a ``ServiceDiscoveryError`` when browsing fails, and cancelling
    ///   the consuming task (or dropping the stream) stops the browse.
    public func browseMonitors(
        lostGracePeriod: Duration = .seconds(3)
    ) -> AsyncThrowingStream<DiscoveryEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream<DiscoveryEvent, any Error>.makeStream()
        let views = browse(MonitorAdvertisement.serviceTypes)
        let task = Task {
            let grace = LostGrace(period: lostGracePeriod, continuation: continuation)
            var merger = DiscoveryMerger()
            do {
                for try await instances in views {
                    for event in merger.update(Self.monitorInstances(instances)) { await grace.report(event) }
                }
                continuation.finish()
            } catch let error as ServiceDiscoveryError {
                continuation.finish(throwing: error.withMonitorAdvice)
            } catch {
                continuation.finish(throwing: error)
            }
            await grace.cancel()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// The browser's view as the merger reads it: each TXT record read as a monitor's.
    private static func monitorInstances(_ instances: [ServiceInstance]) -> [DiscoveryMerger.Instance] {
        instances.map { instance in
            DiscoveryMerger.Instance(
                serviceType: instance.id.type, name: instance.id.name, interfaceIndex: instance.id.interfaceIndex,
                record: MonitorTXTRecord { instance.txt[$0] }, port: instance.port, addresses: instance.addresses)
        }
    }
}

/// Holds `lost` events for a grace period: a `found` of the same monitor within it becomes `updated`.
private actor LostGrace {
    private let period: Duration
    private let continuation: AsyncThrowingStream<DiscoveryEvent, any Error>.Continuation
    /// Monitors reported lost but not passed on yet, with the timer that will.
    private var pending: [String: Task<Void, Never>] = [:]

    init(period: Duration, continuation: AsyncThrowingStream<DiscoveryEvent, any Error>.Continuation) {
        self.period = period
        self.continuation = continuation
    }

    func report(_ event: DiscoveryEvent) {
        switch event {
        case .lost(let monitorId) where period > .zero:
            pending[monitorId] = Task {
                try? await Task.sleep(for: period)
                expire(monitorId)
            }
        case .found(let monitor):
            if let timer = pending.removeValue(forKey: monitor.monitorId) {
                timer.cancel()
                continuation.yield(.updated(monitor))
            } else {
                continuation.yield(event)
            }
        default:
            continuation.yield(event)
        }
    }

    private func expire(_ monitorId: String) {
        // Runs in the timer's task (on this actor): a timer cancelled by the monitor's return comes here too, and
        // must not report it.
        guard !Task.isCancelled, pending.removeValue(forKey: monitorId) != nil else { return }
        continuation.yield(.lost(monitorId: monitorId))
    }

    func cancel() {
        for timer in pending.values { timer.cancel() }
        pending = [:]
    }
}
