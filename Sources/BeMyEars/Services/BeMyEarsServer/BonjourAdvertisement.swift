import Foundation
import Logging
import ServiceDiscovery

/// The server as `_bemyears._tcp` on the LAN (seed §15.2, §17), so clients find it without typing an address.
enum BonjourAdvertisement {
    static let serviceType = "_bemyears._tcp"

    static func make(ports: AsyncStream<Int>, instanceName: String, logger: Logger) -> ServiceAnnouncement {
        ServiceAnnouncement(
            serviceType: serviceType, instanceName: instanceName, txt: ["path": "/ws", "version": "1"], ports: ports,
            logger: logger)
    }

    /// "BeMyEars on <host name>" (cut to DNS-SD's 63 bytes when announced).
    static func defaultInstanceName() -> String {
        "BeMyEars on \(ProcessInfo.processInfo.hostName)"
    }
}
