import CPace
import Crypto
public import DeviceIdentity
import Foundation

/// The listener's side of PIN pairing (PROTOCOL.md §6), a pure state machine.
///
/// It is created for a monitor whose fingerprint was pinned (from discovery) and then observed in the TLS
/// handshake; that observed fingerprint is what goes into CPace's CI and the transcript, never a claimed one.
public struct PINPairingListener: Sendable {
    private enum State: Sendable {
        case idle
        /// Waiting for PIN_REQUIRED: the first one, or (after a wrong PIN) the fresh one for the next attempt.
        case awaitingChallenge(nonce: [UInt8], attemptsRemaining: Int?)
        case awaitingPIN(Challenge)
        case awaitingResult(Challenge, transcript: PairingTranscript, monitorKey: SymmetricKey)
        case finished
    }

    private struct Challenge: Sendable {
        var pairingSessionId: UUID
        var nonce: [UInt8]
        var ya: [UInt8]
        var sid: [UInt8]
        var attemptsRemaining: Int
    }

    /// What the user should see after a monitor message.
    public enum Progress: Sendable, Hashable {
        /// Ask for the PIN shown on the monitor.
        case enterPIN(expiresInSec: Int, attemptsRemaining: Int)
        /// The PIN was wrong; the next PIN_REQUIRED (already on its way) asks again.
        case tryAgain(attemptsRemaining: Int)
        /// Paired: store this monitor as trusted.
        case paired(TrustedMonitor)
    }

    private var state: State = .idle
    let local: LocalDevice
    let monitorId: String
    let monitorFingerprint: CertificateFingerprint

    /// - Parameters:
    ///   - local: This listener's identity facts.
    ///   - monitorId: The monitor's id as discovered.
    ///   - monitorFingerprint: The monitor fingerprint pinned and observed in TLS.
    public init(local: LocalDevice, monitorId: String, monitorFingerprint: CertificateFingerprint) {
        self.local = local
        self.monitorId = monitorId
        self.monitorFingerprint = monitorFingerprint
    }

    /// Starts pairing: the PIN_PAIRING_INIT to send.
    /// - Parameter nonce: 16 random bytes; fresh by default.
    public mutating func start(nonce: [UInt8]? = nil) -> PinPairingInit {
        let nonce =
            nonce
            ?? {
                var generator = SystemRandomNumberGenerator()
                return (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
            }()
        state = .awaitingChallenge(nonce: nonce, attemptsRemaining: nil)
        return PinPairingInit(
            listenerId: local.deviceId.uuidString.lowercased(),
            listenerName: local.name,
            protocolVersion: 1,
            listenerCertFingerprint: local.fingerprint.hex,
            nonce: PairingCrypto.base64(nonce)
        )
    }

    /// Handles a monitor message during pairing.
    /// - Throws: `PairingError` when pairing cannot go on (rejected, unverifiable, malformed, out of order).
    public mutating func handle(_ message: ControlMessage) throws(PairingError) -> Progress {
        switch (state, message) {
        case (.awaitingChallenge(let nonce, let budget), .pinRequired(let required)):
            guard let sessionId = UUID(uuidString: required.pairingSessionId),
                PairingCrypto.canonicalUUID(required.pairingSessionId) == required.pairingSessionId,
                let ya = PairingCrypto.decodeBase64(required.pakeMsgA, count: 32),
                (1...10).contains(required.maxAttempts), (1...600).contains(required.expiresInSec),
                required.maxAttempts <= (budget ?? 10)
            else {
                state = .finished
                throw PairingError(.malformedMessage, "the monitor sent a malformed PIN challenge")
            }
            let challenge = Challenge(
                pairingSessionId: sessionId,
                nonce: nonce,
                ya: ya,
                sid: PINPairingKeys.sessionIdentifier(pairingSessionId: sessionId, nonce: nonce),
                attemptsRemaining: required.maxAttempts
            )
            state = .awaitingPIN(challenge)
            return .enterPIN(expiresInSec: required.expiresInSec, attemptsRemaining: required.maxAttempts)

        case (.awaitingResult(_, let transcript, let monitorKey), .pairAccepted(let accepted)):
            state = .finished
            guard accepted.monitorId == monitorId, let tag = accepted.confirmTag,
                PairingCrypto.verify(tag: tag, key: monitorKey, message: PairingCrypto.canonical(transcript))
            else {
                throw PairingError(
                    .monitorNotAuthenticated,
                    "the monitor could not prove it knows the PIN; pairing was not saved"
                )
            }
            return .paired(TrustedMonitor(monitorId: monitorId, fingerprint: monitorFingerprint))

        case (.awaitingResult(let challenge, _, _), .pairRejected(let rejected)):
            if rejected.reason == .invalidPIN, let remaining = rejected.attemptsRemaining, remaining > 0,
                remaining < challenge.attemptsRemaining
            {
                // The monitor follows with a fresh PIN_REQUIRED: every attempt is a new CPace run.
                state = .awaitingChallenge(nonce: challenge.nonce, attemptsRemaining: remaining)
                return .tryAgain(attemptsRemaining: remaining)
            }
            state = .finished
            throw PairingError(.rejected, Self.explain(rejected.reason), reason: rejected.reason)

        case (.awaitingChallenge, .pairRejected(let rejected)):
            state = .finished
            throw PairingError(.rejected, Self.explain(rejected.reason), reason: rejected.reason)

        case (.awaitingChallenge, .error(let error)) where error.errorCode == .conflict:
            state = .finished
            throw PairingError(.rejected, "the monitor is busy pairing another device; try again in a minute")

        default:
            throw PairingError(.unexpectedMessage, "unexpected \(message.typeName) during PIN pairing")
        }
    }

    /// Runs CPace with the typed PIN and returns the PIN_SUBMIT to send.
    /// - Throws: `PairingError.invalidPINFormat` unless the text is 6 digits; `.unexpectedMessage` when no PIN
    ///   is being asked for; `.malformedMessage` if the monitor's PAKE message is invalid.
    public mutating func submit(pin text: String) throws(PairingError) -> PinSubmit {
        guard case .awaitingPIN(let challenge) = state else {
            throw PairingError(.unexpectedMessage, "no PIN is being asked for; start pairing again")
        }
        guard PIN.isWellFormed(text) else {
            throw PairingError(.invalidPINFormat, "the PIN is the 6 digits shown on the monitor")
        }
        let ci = PINPairingKeys.channelIdentifier(monitor: monitorFingerprint, listener: local.fingerprint)
        let responder: CPaceResponder
        do {
            responder = try CPaceResponder(
                prs: Array(text.utf8), ci: ci, sid: challenge.sid, ad: [],
                peerMessage: challenge.ya, peerAD: [])
        } catch {
            state = .finished
            throw PairingError(.malformedMessage, "the monitor sent an invalid PAKE message; pairing stopped")
        }
        let keys = PINPairingKeys.derive(isk: responder.sessionKey, sid: challenge.sid)
        let sessionId = challenge.pairingSessionId.uuidString.lowercased()
        let transcript = PairingTranscript(
            monitorId: monitorId,
            listenerId: local.deviceId.uuidString.lowercased(),
            listenerPublicKey: PairingCrypto.base64(local.publicKeySPKI),
            listenerCertFingerprint: local.fingerprint.hex,
            monitorCertFingerprint: monitorFingerprint.hex,
            pairingSessionId: sessionId
        )
        state = .awaitingResult(challenge, transcript: transcript, monitorKey: keys.monitor)
        return PinSubmit(
            pairingSessionId: sessionId,
            pakeMsgB: PairingCrypto.base64(responder.message),
            transcript: transcript,
            authTag: PairingCrypto.tag(key: keys.listener, message: PairingCrypto.canonical(transcript))
        )
    }

    static func explain(_ reason: PairRejected.Reason) -> String {
        switch reason {
        case .invalidPIN: "wrong PIN too many times; start pairing again to get a new PIN"
        case .expired: "the PIN expired; start pairing again to get a new PIN"
        case .locked:
            "PIN pairing is locked on the monitor after repeated failures; on the monitor, `cribcall pairing unlock` "
                + "opens it again (pairing by QR code still works)"
        case .fingerprintMismatch: "the monitor saw a different device identity than this listener claimed"
        default: "the monitor refused pairing (\(reason.rawValue))"
        }
    }
}
