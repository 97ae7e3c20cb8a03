public import DeviceIdentity
import Foundation

/// The listener's side of QR pairing: builds the PAIR_REQUEST and checks the monitor's confirmation.
public struct QRPairingClient: Sendable {
    /// The scanned payload.
    public let payload: QRPairingPayload
    /// The fingerprint to pin when connecting: the monitor must present exactly this certificate.
    public let pinnedFingerprint: CertificateFingerprint
    let local: LocalDevice
    let token: PairingToken

    /// Prepares pairing from scanned QR text.
    /// - Throws: `PairingError.invalidQRCode` when the text is not a valid pairing code.
    public init(qrText: String, local: LocalDevice) throws(PairingError) {
        let payload = try QRPairingPayload.parse(qrText)
        guard let fingerprint = CertificateFingerprint(hex: payload.monitorCertFingerprint),
            let token = PairingToken(base64URL: payload.pairingToken)
        else {
            throw PairingError(.invalidQRCode, "this pairing code is damaged; show a new QR code on the monitor")
        }
        self.payload = payload
        self.pinnedFingerprint = fingerprint
        self.local = local
        self.token = token
    }

    var transcript: QRPairingTranscript {
        QRPairingTranscript(
            monitorId: payload.monitorId,
            monitorCertFingerprint: pinnedFingerprint.hex,
            listenerId: local.deviceId.uuidString.lowercased(),
            listenerPublicKey: PairingCrypto.base64(local.publicKeySPKI),
            listenerCertFingerprint: local.fingerprint.hex
        )
    }

    /// The PAIR_REQUEST to send once connected to the pinned monitor.
    public func request() -> PairRequest {
        let transcript = self.transcript
        return PairRequest(
            listenerId: transcript.listenerId,
            listenerName: local.name,
            listenerPublicKey: transcript.listenerPublicKey,
            listenerCertFingerprint: transcript.listenerCertFingerprint,
            authTag: transcript.authTag(key: QRPairingTranscript.key(for: token))
        )
    }

    /// Checks the monitor's answer.
    /// - Returns: The monitor to trust, only if its `confirmTag` proves it knew the token.
    /// - Throws: `PairingError` for a rejection or an unverifiable acceptance.
    public func complete(with reply: ControlMessage) throws(PairingError) -> TrustedMonitor {
        switch reply {
        case .pairAccepted(let accepted):
            guard accepted.monitorId == payload.monitorId, let tag = accepted.confirmTag,
                transcript.verifyConfirmTag(tag, key: QRPairingTranscript.key(for: token))
            else {
                throw PairingError(
                    .monitorNotAuthenticated,
                    "the monitor could not prove it showed this QR code; pairing was not saved"
                )
            }
            return TrustedMonitor(monitorId: payload.monitorId, fingerprint: pinnedFingerprint)
        case .pairRejected(let rejected):
            throw PairingError(.rejected, Self.explain(rejected.reason), reason: rejected.reason)
        default:
            throw PairingError(.unexpectedMessage, "the monitor answered \(reply.typeName) to a pairing request")
        }
    }

    static func explain(_ reason: PairRejected.Reason) -> String {
        switch reason {
        case .expired: "the QR code expired; show a new one on the monitor and scan again"
        case .invalidToken: "the QR code is no longer valid (it was already used or replaced); show a new one"
        case .fingerprintMismatch: "the monitor saw a different device identity than the request claimed"
        default: "the monitor refused pairing (\(reason.rawValue))"
        }
    }
}
