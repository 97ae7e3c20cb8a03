/// Publishes a monitor on the LAN. The real adapter is ``DNSSDServiceDiscovery``; services test against
/// ``InMemoryServiceDiscovery``.
public protocol ServiceAdvertiser: Sendable {
    /// Registers `advertisement` under both `_baby-monitor._udp` and `_baby-monitor._tcp`.
    ///
    /// - Returns: A handle that keeps the advertisement alive until cancelled.
    /// - Throws: ``ServiceDiscoveryError`` when the daemon is missing or registration fails.
    func advertise(_ advertisement: MonitorAdvertisement) async throws(ServiceDiscoveryError) -> any AdvertisementHandle
}

/// A live advertisement.
public protocol AdvertisementHandle: Sendable {
    /// Replaces the advertised data: a TXT update, and a re-registration when the instance name changes.
    ///
    /// - Throws: ``ServiceDiscoveryError`` when the update fails.
    func update(_ advertisement: MonitorAdvertisement) async throws(ServiceDiscoveryError)

    /// Withdraws the advertisement. Idempotent.
    func cancel() async
}
