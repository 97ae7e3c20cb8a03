import CPace
import Crypto

// The CPace module offers no raw-pointer access (ARCHITECTURE.md: `Unsafe*` code stays in C adapters). Tests that
// need the ISK bytes read them through swift-crypto's `SymmetricKey`, which is where the bytes live.
extension CPaceSessionKey {
    /// Calls `body` with the 64 ISK bytes (test-only helper).
    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try symmetricKey.withUnsafeBytes(body)
    }
}
