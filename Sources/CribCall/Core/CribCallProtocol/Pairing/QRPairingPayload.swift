import CanonicalJSON

/// What the monitor's QR code encodes (seed 2.3.1 plus the one-time `pairingToken` of PROTOCOL.md §5).
public struct QRPairingPayload: Sendable, Hashable, Codable {
    /// Service information for connecting.
    public struct Service: Sendable, Hashable, Codable {
        public var `protocol`: String
        public var version: Int
        public var defaultPort: Int

        public init(protocol: String = "baby-monitor", version: Int = 1, defaultPort: Int = 48080) {
            self.protocol = `protocol`
            self.version = version
            self.defaultPort = defaultPort
        }
    }

    /// The value of `type` for this payload version.
    public static let payloadType = "monitor_pair_v1"

    public var type: String
    public var monitorId: String
    public var monitorName: String
    public var monitorCertFingerprint: String
    /// Base64 SPKI; informational.
    public var monitorPublicKey: String?
    public var service: Service
    public var pairingToken: String

    public init(
        monitorId: String,
        monitorName: String,
        monitorCertFingerprint: String,
        monitorPublicKey: String?,
        service: Service = Service(),
        pairingToken: PairingToken
    ) {
        self.type = Self.payloadType
        self.monitorId = monitorId
        self.monitorName = monitorName
        self.monitorCertFingerprint = monitorCertFingerprint
        self.monitorPublicKey = monitorPublicKey
        self.service = service
        self.pairingToken = pairingToken.base64URL
    }

    /// The canonical JSON text to put into the QR code.
    public var qrText: String {
        String(decoding: PairingCrypto.canonical(self), as: UTF8.self)
    }

    /// Parses and validates scanned QR text.
    /// - Throws: `PairingError` saying what is wrong with the code (wrong app, damaged, unsupported version).
    public static func parse(_ text: String) throws(PairingError) -> QRPairingPayload {
        let value: JSONValue
        do {
            value = try JSONParser(limits: .init(maxDepth: 4, maxBytes: 4096)).parse(Array(text.utf8))
        } catch {
            throw PairingError(.invalidQRCode, "this QR code is not a CribCall pairing code (not JSON)")
        }
        let payload: QRPairingPayload
        do {
            payload = try JSONValueDecoder().decode(QRPairingPayload.self, from: value)
        } catch {
            throw PairingError(.invalidQRCode, "this QR code is not a CribCall pairing code (fields missing)")
        }
        guard payload.type == payloadType else {
            throw PairingError(
                .invalidQRCode, "unsupported pairing code \"\(payload.type.prefix(32))\"; update CribCall")
        }
        guard payload.service.version == 1 else {
            throw PairingError(
                .invalidQRCode, "this monitor speaks protocol version \(payload.service.version); update CribCall")
        }
        guard PairingCrypto.canonicalUUID(payload.monitorId) != nil,
            CertificateFingerprintText.isValid(payload.monitorCertFingerprint),
            PairingToken(base64URL: payload.pairingToken) != nil,
            (1...65535).contains(payload.service.defaultPort)
        else {
            throw PairingError(.invalidQRCode, "this pairing code is damaged; show a new QR code on the monitor")
        }
        return payload
    }
}

enum CertificateFingerprintText {
    static func isValid(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}
