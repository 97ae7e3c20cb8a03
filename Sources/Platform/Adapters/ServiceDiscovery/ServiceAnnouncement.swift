public import Logging
public import ServiceLifecycle

/// A server's DNS-SD advertisement as a service of its lifecycle: registered once the server listens (its port
/// comes through `ports`), withdrawn on shutdown. Without an mDNS daemon it logs one warning and the server runs
/// on: discovery is a convenience, an address can always be typed. Logs `event=bonjour_advertised` and
/// `event=bonjour_unavailable` lines.
public struct ServiceAnnouncement: Service {
    public let serviceType: String
    public let instanceName: String
    public let txt: TXTRecord
    /// Yields the listening port once the server runs.
    public let ports: AsyncStream<Int>
    public let logger: Logger
    /// The option that turns it off, named in the warning (e.g. `--no-bonjour`).
    public let disableHint: String

    public init(
        serviceType: String, instanceName: String, txt: TXTRecord, ports: AsyncStream<Int>, logger: Logger,
        disableHint: String = "--no-bonjour"
    ) {
        self.serviceType = serviceType
        var name = instanceName
        while name.utf8.count > 63 { name.removeLast() }  // DNS-SD's limit for an instance name
        self.instanceName = name
        self.txt = txt
        self.ports = ports
        self.logger = logger
        self.disableHint = disableHint
    }

    /// Never returns before graceful shutdown: a service that ends would stop the whole server.
    public func run() async throws {
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else {
            try? await gracefulShutdown()
            return
        }
        let registration: any AdvertisementHandle
        do {
            registration = try await DNSSDServiceDiscovery().advertise(
                ServiceAdvertisement(name: instanceName, types: [serviceType], port: port, txt: txt))
        } catch {
            let reason =
                error.code == .daemonNotRunning
                ? "no mDNS daemon: start avahi-daemon to be discoverable, or pass \(disableHint)"
                : error.description
            logger.warning(
                "event=bonjour_unavailable service=\(serviceType) reason=\"\(reason)\" (the server runs without it)")
            try? await gracefulShutdown()
            return
        }
        logger.info("event=bonjour_advertised service=\(serviceType) port=\(port)")
        try? await gracefulShutdown()
        await registration.cancel()
    }
}
