/// Why a CPace step failed.
///
/// Errors never carry secret material: no scalar, password, point K or key bytes, only public facts such as a
/// received message length.
public enum CPaceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// scalar_mult_vfy returned the neutral element I (32 zero bytes): the peer's message was a low-order point
    /// (or the all-zero encoding). The draft requires aborting the session.
    case identityElement
    /// A peer message was not the 32-byte encoding of a u-coordinate; the associated value is the received length.
    case invalidMessageLength(Int)
    /// An injected scalar was not 32 bytes long (test-only initializers).
    case invalidScalarLength

    /// A human-readable explanation without secret values.
    public var description: String {
        switch self {
        case .identityElement:
            "CPace aborted: the shared point is the identity element (low-order peer message)"
        case .invalidMessageLength(let length):
            "CPace aborted: peer message has \(length) bytes, expected \(CPace.fieldSizeBytes)"
        case .invalidScalarLength:
            "CPace scalar must be \(CPace.fieldSizeBytes) bytes"
        }
    }
}
