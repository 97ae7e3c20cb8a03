import Foundation
import Logging
import ServiceDiscovery
import ServiceLifecycle

/// Advertises the server as `_bemyears._tcp` on the LAN (seed §15.2, §17) once it listens, so clients find it
/// without typing an address; withdrawn on shutdown. Without an mDNS daemon it logs one warning and the server
/// runs on: discovery is a convenience, the address can always be typed.
struct BonjourAdvertisement: Service {
    static let serviceType = "_bemyears._tcp"

    /// Yields the listening port once the server runs.
    let ports: AsyncStream<Int>
    let instanceName: String
    let logger: Logger

    /// Never returns before graceful shutdown: a service that ends would stop the whole server.
    func run() async throws {
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else {
            try? await gracefulShutdown()
            return
        }
        let registration: any AdvertisementHandle
        do {
            registration = try await DNSSDServiceDiscovery().advertise(
                ServiceAdvertisement(
                    name: instanceName, types: [Self.serviceType], port: port, txt: ["path": "/ws", "version": "1"])
            )
        } catch {
            let reason =
                error.code == .daemonNotRunning
                ? "no mDNS daemon: start avahi-daemon to be discoverable, or pass --no-bonjour"
                : error.description
            logger.warning(
                "event=bonjour_unavailable service=\(Self.serviceType) reason=\"\(reason)\" (the server runs without it)"
            )
            try? await gracefulShutdown()
            return
        }
        logger.info("event=bonjour_advertised service=\(Self.serviceType) port=\(port)")
        try? await gracefulShutdown()
        await registration.cancel()
    }

    /// "BeMyEars on <host name>", cut to DNS-SD's 63 bytes.
    static func defaultInstanceName() -> String {
        var name = "BeMyEars on \(ProcessInfo.processInfo.hostName)"
        while name.utf8.count > 63 { name.removeLast() }
        return name
    }
}
