import Foundation

/// The public facts of a device identity, as `cribcall identity` prints them. Holds no secret.
public struct IdentitySummary: Sendable, Hashable, Codable {
    /// The lowercase device UUID.
    public var deviceId: String
    /// Lowercase hex SHA-256 of the certificate DER.
    public var certFingerprint: String
    /// Base64 of the SubjectPublicKeyInfo DER.
    public var publicKey: String
    /// The certificate as PEM.
    public var certificatePEM: String
    /// The DTLS certificate's SDP fingerprint, when known.
    public var dtlsFingerprint: String?

    /// Summarises an identity and, optionally, its DTLS certificate.
    public init(_ identity: DeviceIdentity, dtls: DTLSCertificate? = nil) {
        self.deviceId = identity.deviceId.lowercasedString
        self.certFingerprint = identity.fingerprint.hex
        self.publicKey = Data(identity.publicKeySPKI).base64EncodedString()
        self.certificatePEM = identity.certificatePEM
        self.dtlsFingerprint = dtls?.sdpFingerprint
    }
}
