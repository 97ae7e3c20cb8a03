public import DeviceIdentity
public import Foundation

/// What the monitor knows about a pairing connection from TLS itself, never from the peer's claims.
public struct PairingContext: Sendable, Hashable {
    /// The monitor's own device id.
    public var monitorId: UUID
    /// The monitor's own certificate fingerprint.
    public var monitorFingerprint: CertificateFingerprint
    /// The fingerprint of the client certificate presented in this connection's handshake.
    public var clientFingerprint: CertificateFingerprint
    /// The SubjectPublicKeyInfo DER of that client certificate's key.
    public var clientPublicKeySPKI: [UInt8]
    /// The client's network address (its IP, without the port), which PIN sessions left unused are counted by.
    public var clientAddress: String

    public init(
        monitorId: UUID,
        monitorFingerprint: CertificateFingerprint,
        clientFingerprint: CertificateFingerprint,
        clientPublicKeySPKI: [UInt8],
        clientAddress: String = ""
    ) {
        self.monitorId = monitorId
        self.monitorFingerprint = monitorFingerprint
        self.clientFingerprint = clientFingerprint
        self.clientPublicKeySPKI = clientPublicKeySPKI
        self.clientAddress = clientAddress
    }
}

/// The public facts of this device that a listener puts into pairing messages.
public struct LocalDevice: Sendable, Hashable {
    public var deviceId: UUID
    public var name: String
    public var fingerprint: CertificateFingerprint
    public var publicKeySPKI: [UInt8]

    public init(deviceId: UUID, name: String, fingerprint: CertificateFingerprint, publicKeySPKI: [UInt8]) {
        self.deviceId = deviceId
        self.name = name
        self.fingerprint = fingerprint
        self.publicKeySPKI = publicKeySPKI
    }

    /// The facts of a device identity under a display name.
    public init(_ identity: DeviceIdentity, name: String) {
        self.init(
            deviceId: identity.deviceId,
            name: name,
            fingerprint: identity.fingerprint,
            publicKeySPKI: identity.publicKeySPKI
        )
    }
}

/// A listener the monitor has just agreed to trust; the service stores it (with a creation time).
public struct TrustedListener: Sendable, Hashable, Codable {
    public var listenerId: String
    public var name: String
    /// Base64 SPKI DER.
    public var publicKey: String
    public var fingerprint: CertificateFingerprint

    public init(listenerId: String, name: String, publicKey: String, fingerprint: CertificateFingerprint) {
        self.listenerId = listenerId
        self.name = name
        self.publicKey = publicKey
        self.fingerprint = fingerprint
    }
}

/// A monitor the listener has just agreed to trust; the service stores it.
public struct TrustedMonitor: Sendable, Hashable, Codable {
    public var monitorId: String
    public var fingerprint: CertificateFingerprint

    public init(monitorId: String, fingerprint: CertificateFingerprint) {
        self.monitorId = monitorId
        self.fingerprint = fingerprint
    }
}
