import CribCallProtocol
public import CribCallStore
public import DeviceIdentity
import Foundation

extension CribCallDatabase {
    /// Trusts `identity` as if it had paired under `listenerId` and `name`: what a monitor's database holds for a
    /// listener that paired before the test starts.
    @discardableResult
    public func trust(_ identity: DeviceIdentity, as listenerId: String, name: String) throws -> TrustedListenerRecord {
        try trustListener(
            TrustedListener(
                listenerId: listenerId, name: name,
                publicKey: Data(identity.publicKeySPKI).base64EncodedString(), fingerprint: identity.fingerprint),
            at: Date())
    }
}
