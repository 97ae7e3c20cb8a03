import CanonicalJSON
public import CribCallRuntime
import DeviceIdentity
import DeviceIdentityStore
import Foundation

/// `cribcall identity`: creates the device identity on first use and describes its public facts.
public enum IdentityReport {
    /// deviceId, certFingerprint, publicKey, the DTLS fingerprint and the certificate PEM, as text or one JSON object
    /// with `"event":"identity"`. The private key stays in the data directory (0600) and is never shown.
    public static func describe(in data: CribCallDataDirectory, json: Bool) throws -> String {
        let loaded = try data.identity()
        let summary = IdentitySummary(loaded.identity, dtls: loaded.dtls)
        guard json else {
            return """
                \(loaded.created ? "Created a new device identity" : "Device identity") in \(data.url.path)
                  deviceId:        \(summary.deviceId)
                  certFingerprint: \(summary.certFingerprint)
                  publicKey:       \(summary.publicKey)
                  dtlsFingerprint: \(summary.dtlsFingerprint ?? "-")
                certificatePEM:
                \(summary.certificatePEM)
                """
        }
        var object = try JSONValueEncoder().encode(summary)
        if case .object(var members) = object {
            members["event"] = .string("identity")
            members["created"] = .bool(loaded.created)
            members["dataDirectory"] = .string(data.url.path)
            object = .object(members)
        }
        return object.canonicalString
    }
}
