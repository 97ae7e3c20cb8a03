/// Publishes services on the LAN. The real adapter is ``DNSSDServiceDiscovery``; services test against
/// ``InMemoryServiceDiscovery``.
public protocol ServiceAdvertiser: Sendable {
    /// Registers `advertisement` under each of its types and waits until that is confirmed.
    ///
    /// - Returns: A handle that keeps the advertisement alive until cancelled.
    /// - Throws: ``ServiceDiscoveryError`` when the advertisement is invalid, the daemon is missing or registration
    ///   fails.
    func advertise(_ advertisement: ServiceAdvertisement) async throws(ServiceDiscoveryError) -> any AdvertisementHandle
}

/// A live advertisement.
public protocol AdvertisementHandle: Sendable {
    /// Replaces the advertised data: the TXT record in place when only it changed, a new registration when the
    /// name, types or port changed.
    ///
    /// - Throws: ``ServiceDiscoveryError`` when the update fails.
    func update(_ advertisement: ServiceAdvertisement) async throws(ServiceDiscoveryError)

    /// Withdraws the advertisement. Idempotent.
    func cancel() async
}
