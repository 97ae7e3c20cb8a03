import DeviceIdentity
import Foundation

/// The monitor's side of QR pairing (PROTOCOL.md §5), a pure state machine with an injected clock.
///
/// While a QR code is shown, its token is live for at most 5 minutes. The first *accepted* PAIR_REQUEST uses
/// it up; failed attempts do not. Every failure is answered PAIR_REJECTED and the connection closed with
/// code 2 (UNAUTHORIZED).
public struct QRPairingVerifier: Sendable {
    /// The longest a token may stay live.
    public static let maxTokenLifetime: Duration = .seconds(300)

    private enum State: Sendable {
        case idle
        case showing(PairingToken, expiresAt: ContinuousClock.Instant)
    }

    /// What to do with a PAIR_REQUEST.
    public enum Outcome: Sendable, Hashable {
        /// Store the listener, send the reply, hide the QR code.
        case accepted(TrustedListener, reply: PairAccepted)
        /// Send the rejection, then close the connection with code 2.
        case rejected(PairRejected)
    }

    private var state: State = .idle

    public init() {}

    /// Starts showing a QR code carrying `token`.
    /// - Parameters:
    ///   - token: The fresh token the QR code carries.
    ///   - now: The current monotonic time.
    ///   - lifetime: How long the code is valid; capped at 5 minutes.
    public mutating func show(token: PairingToken, now: ContinuousClock.Instant, lifetime: Duration = maxTokenLifetime)
    {
        state = .showing(token, expiresAt: now + min(lifetime, Self.maxTokenLifetime))
    }

    /// Stops showing the QR code: its token is dead.
    public mutating func hide() {
        state = .idle
    }

    /// Whether a live token is being shown.
    public func isShowing(now: ContinuousClock.Instant) -> Bool {
        if case .showing(_, let expiresAt) = state { return now < expiresAt }
        return false
    }

    /// Checks a PAIR_REQUEST received on a connection whose TLS facts are `context`.
    public mutating func handle(
        _ request: PairRequest,
        context: PairingContext,
        now: ContinuousClock.Instant
    ) -> Outcome {
        // The claimed identity must be the one proven in the TLS handshake.
        guard request.listenerCertFingerprint == context.clientFingerprint.hex,
            let claimedKey = PairingCrypto.decodeBase64(request.listenerPublicKey),
            claimedKey == context.clientPublicKeySPKI,
            let listenerId = PairingCrypto.canonicalUUID(request.listenerId)
        else {
            return .rejected(PairRejected(reason: .fingerprintMismatch))
        }
        guard case .showing(let token, let expiresAt) = state else {
            return .rejected(PairRejected(reason: .invalidToken))
        }
        guard now < expiresAt else {
            state = .idle
            return .rejected(PairRejected(reason: .expired))
        }
        // T is rebuilt from our own view, never from the request's claims about the monitor.
        let transcript = QRPairingTranscript(
            monitorId: context.monitorId.uuidString.lowercased(),
            monitorCertFingerprint: context.monitorFingerprint.hex,
            listenerId: request.listenerId,
            listenerPublicKey: request.listenerPublicKey,
            listenerCertFingerprint: context.clientFingerprint.hex
        )
        let key = QRPairingTranscript.key(for: token)
        guard transcript.verifyAuthTag(request.authTag, key: key) else {
            return .rejected(PairRejected(reason: .invalidToken))
        }
        state = .idle  // single use
        let listener = TrustedListener(
            listenerId: listenerId,
            name: PeerName.sanitized(request.listenerName),
            publicKey: request.listenerPublicKey,
            fingerprint: context.clientFingerprint
        )
        let reply = PairAccepted(monitorId: transcript.monitorId, confirmTag: transcript.confirmTag(key: key))
        return .accepted(listener, reply: reply)
    }
}
