/// Finds monitors on the LAN. The real adapter is ``DNSSDServiceDiscovery``; services test against
/// ``InMemoryServiceDiscovery``.
public protocol ServiceBrowser: Sendable {
    /// Browses `_baby-monitor._udp` and `_baby-monitor._tcp` and reports monitors merged by `monitorId`.
    ///
    /// The stream ends with a ``ServiceDiscoveryError`` when browsing fails; cancelling the consuming task (or
    /// dropping the stream) stops the browse.
    func browse() -> AsyncThrowingStream<DiscoveryEvent, any Error>
}
