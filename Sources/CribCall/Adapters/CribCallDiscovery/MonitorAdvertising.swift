public import CribCallProtocol
public import ServiceDiscovery

extension ServiceAdvertiser {
    /// Announces a monitor on the LAN (PROTOCOL.md §10): instance name = monitor name, under both service types,
    /// with the monitor's TXT record.
    ///
    /// - Returns: A handle that follows renames and keeps the advertisement alive until cancelled.
    /// - Throws: ``ServiceDiscoveryError`` saying what to do (e.g. start Avahi, or run without discovery).
    public func advertise(
        _ monitor: MonitorAdvertisement
    ) async throws(ServiceDiscoveryError) -> MonitorAdvertisementHandle {
        let advertisement = try ServiceAdvertisement(monitor)
        let handle = try await withMonitorAdvice { () async throws(ServiceDiscoveryError) in
            try await advertise(advertisement)
        }
        return MonitorAdvertisementHandle(handle)
    }
}

/// A monitor's live advertisement.
public struct MonitorAdvertisementHandle: Sendable {
    private let handle: any AdvertisementHandle

    init(_ handle: any AdvertisementHandle) {
        self.handle = handle
    }

    /// Announces changed data: the TXT record in place, a new registration when the name changed.
    ///
    /// - Throws: ``ServiceDiscoveryError`` when the update fails.
    public func update(_ monitor: MonitorAdvertisement) async throws(ServiceDiscoveryError) {
        let advertisement = try ServiceAdvertisement(monitor)
        try await withMonitorAdvice { () async throws(ServiceDiscoveryError) in
            try await handle.update(advertisement)
        }
    }

    /// Withdraws the advertisement. Idempotent.
    public func cancel() async {
        await handle.cancel()
    }
}

extension ServiceAdvertisement {
    /// The DNS-SD form of a monitor's advertisement.
    ///
    /// - Throws: ``ServiceDiscoveryError/Code/invalidAdvertisement`` when the monitor name cannot be an instance name.
    init(_ monitor: MonitorAdvertisement) throws(ServiceDiscoveryError) {
        guard monitor.monitorName.utf8.count <= 63, !monitor.monitorName.isEmpty else {
            throw ServiceDiscoveryError(
                code: .invalidAdvertisement,
                message: "the monitor name must be 1 to 63 bytes to be a DNS-SD instance name: shorten it"
            )
        }
        self.init(
            name: monitor.monitorName, types: MonitorAdvertisement.serviceTypes, port: monitor.port,
            txt: TXTRecord(MonitorTXTRecord(monitor).entries))
    }
}

/// Runs `body`, adding to a missing-daemon error how CribCall works without discovery.
func withMonitorAdvice<Result>(
    _ body: () async throws(ServiceDiscoveryError) -> Result
) async throws(ServiceDiscoveryError) -> Result {
    do {
        return try await body()
    } catch {
        throw error.withMonitorAdvice
    }
}

extension ServiceDiscoveryError {
    /// This error, telling how to do without discovery when the daemon is missing.
    var withMonitorAdvice: ServiceDiscoveryError {
        guard code == .daemonNotRunning else { return self }
        return ServiceDiscoveryError(
            code: code, message: message + " (or run without discovery: --no-discovery / --address HOST:PORT)")
    }
}
