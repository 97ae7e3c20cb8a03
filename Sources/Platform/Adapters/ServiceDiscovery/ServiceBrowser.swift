/// Finds services on the LAN. The real adapter is ``DNSSDServiceDiscovery``; services test against
/// ``InMemoryServiceDiscovery``.
public protocol ServiceBrowser: Sendable {
    /// Browses `types` in `local.` and yields, after every change, all instances currently resolved, sorted by
    /// ``ServiceInstance/ID``: an instance appears once its port and TXT record are known, changes with its TXT
    /// record and addresses, and disappears when it is withdrawn.
    ///
    /// The stream ends with a ``ServiceDiscoveryError`` when browsing fails; cancelling the consuming task (or
    /// dropping the stream) stops the browse.
    func browse(_ types: [String]) -> AsyncThrowingStream<[ServiceInstance], any Error>
}
