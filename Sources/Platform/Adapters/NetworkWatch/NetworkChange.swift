/// Something the kernel said about the network that may change whether uploads can go out.
public enum NetworkChange: Sendable, Hashable {
    /// A link appeared, changed (up, down, carrier) or disappeared.
    case link(index: Int32)
    /// A route was added or removed.
    case route
    /// The kernel dropped events (our socket's buffer overflowed): assume anything changed.
    case unknown
}
