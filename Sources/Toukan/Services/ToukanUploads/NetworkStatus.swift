public import NetworkWatch

/// The network as the upload loop sees it: whether uploads can go out now, and a signal when that may have
/// changed. `NetworkWatch` (rtnetlink) is the real one; tests use a twin they switch by hand.
public protocol NetworkStatus: Sendable {
    /// Whether a default route exists and its link is up.
    func isOnline() -> Bool
    /// Yields whenever connectivity may have changed; ends when the source stops.
    var changes: AsyncStream<NetworkChange> { get }
}

extension NetworkWatch: NetworkStatus {
    /// A routing table that cannot be read counts as online: an upload attempt then finds out, and its failure is
    /// retried like any other.
    public func isOnline() -> Bool {
        (try? NetworkWatch.isOnline()) ?? true
    }
}
