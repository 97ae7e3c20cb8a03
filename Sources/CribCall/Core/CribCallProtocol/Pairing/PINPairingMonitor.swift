import CPace
import Crypto
import DeviceIdentity
public import Foundation

/// The monitor's side of PIN pairing (PROTOCOL.md §6): a pure state machine with an injected clock.
///
/// One PIN session at a time, bound to the connection that started it. A session lives 60 s and allows 3
/// attempts; after the third wrong PIN it is discarded and the connection closed with code 2. After 10 failed
/// sessions in a row PIN pairing locks until re-enabled on the monitor; the counter is handed to the service
/// to persist (`.persistFailedSessions`) and given back at start-up (`init(failedSessionsInARow:)`).
///
/// Every attempt is a fresh CPace run, because draft-irtf-cfrg-cpace §10.9 forbids reusing a scalar: after a
/// wrong PIN the monitor answers `PAIR_REJECTED {INVALID_PIN, attemptsRemaining}` and then a new
/// `PIN_REQUIRED` with a new `pairingSessionId` (hence a new sid) and a new `pakeMsgA`; the PIN, the deadline
/// and the attempt budget stay those of the session.
///
/// Its state is one enum: idle, or an attempt awaiting PIN_SUBMIT, which owns the attempt's single-use CPace
/// initiator beside the session's facts, so a session without an attempt (or the reverse) cannot be expressed. The
/// machine is non-copyable because it owns that initiator. Randomness is injected: the PIN and first session id in
/// ``handleInit(_:context:connection:now:entropy:)``, the next attempt's session id in
/// ``handleSubmit(_:context:connection:now:next:)`` (CPace's scalar is drawn inside `CPaceInitiator`, by design).
public struct PINPairingMonitor: ~Copyable, Sendable {
    /// How long a PIN is valid.
    public static let sessionLifetime: Duration = .seconds(60)
    /// Wrong PINs allowed per session.
    public static let maxAttempts = 3
    /// Failed sessions in a row before PIN pairing locks.
    public static let lockThreshold = 10
    /// PIN sessions an address may leave unused (no PIN tried: it only held the one session there is) before it
    /// must wait: ``unusedBackoff``, doubled for each further one, at most ``maximumBackoff``.
    public static let unusedAllowance = 2
    public static let unusedBackoff: Duration = .seconds(60)
    public static let maximumBackoff: Duration = .seconds(30 * 60)
    /// Addresses remembered for that (the oldest go first).
    static let rememberedAddresses = 256

    /// Identifies a connection, as the service names it.
    public typealias ConnectionID = UInt64

    /// The random values a new session needs (the next attempt needs only a `pairingSessionId`); injectable so
    /// tests are deterministic.
    public struct Entropy: Sendable {
        public var pin: PIN
        public var pairingSessionId: UUID

        public init(pin: PIN, pairingSessionId: UUID) {
            self.pin = pin
            self.pairingSessionId = pairingSessionId
        }

        /// Fresh random values.
        public static func random() -> Entropy {
            Entropy(pin: .random(), pairingSessionId: UUID())
        }
    }

    /// The id of an attempt after a wrong PIN (a fresh sid for a fresh CPace run).
    public struct AttemptEntropy: Sendable {
        public var pairingSessionId: UUID

        public init(pairingSessionId: UUID) {
            self.pairingSessionId = pairingSessionId
        }

        /// A fresh random id.
        public static func random() -> AttemptEntropy {
            AttemptEntropy(pairingSessionId: UUID())
        }
    }

    /// What the service must do, in order.
    public enum Action: Sendable, Hashable {
        /// Send this message on the session's connection.
        case send(ControlMessage)
        /// Close the connection with this application error code (after the sends before it are delivered).
        case close(ErrorCode)
        /// Show the PIN on the monitor's screen until `hidePIN` or the deadline.
        case showPIN(PIN, expiresAt: ContinuousClock.Instant)
        /// Take the PIN off the screen.
        case hidePIN
        /// Call `expire(now:)` at this time.
        case scheduleExpiry(at: ContinuousClock.Instant)
        /// Store this listener as trusted.
        case trust(TrustedListener)
        /// Persist the failed-session counter (it survives restarts).
        case persistFailedSessions(Int)
    }

    /// The PIN session's facts (copyable); the attempt's initiator sits beside them in ``Phase/attempt``.
    private struct Session: Sendable {
        var connection: ConnectionID
        var listenerId: String
        var listenerName: String
        var pin: PIN
        var nonce: [UInt8]
        var expiresAt: ContinuousClock.Instant
        var attemptsRemaining: Int
        var hadWrongPIN: Bool
        /// The client's address, and whether it tried a PIN at all.
        var address: String
        var touched: Bool
        /// The current attempt's id and sid.
        var pairingSessionId: UUID
        var sid: [UInt8]
        var ci: [UInt8]
    }

    /// Where the machine is.
    private enum Phase: ~Copyable, Sendable {
        /// No PIN session.
        case idle
        /// A PIN on screen and one CPace run awaiting PIN_SUBMIT.
        case attempt(Session, CPaceInitiator)

        /// The current phase, leaving `.idle` in its place.
        mutating func take() -> Phase {
            let current = consume self
            self = .idle
            return current
        }
    }

    private var phase = Phase.idle
    /// Per address: PIN sessions it left unused, and until when it must wait.
    private var unused: [String: (count: Int, waitUntil: ContinuousClock.Instant?, last: ContinuousClock.Instant)] =
        [:]
    /// Failed sessions in a row (persisted by the service).
    public private(set) var failedSessionsInARow: Int

    /// Whether PIN pairing is locked until re-enabled.
    public var isLocked: Bool { failedSessionsInARow >= Self.lockThreshold }

    /// Whether a PIN session is running.
    public var hasActiveSession: Bool { session != nil }

    /// The running session's facts, if any.
    private var session: Session? {
        switch phase {
        case .idle: nil
        case .attempt(let session, _): session
        }
    }

    /// - Parameter failedSessionsInARow: The persisted counter from the last run.
    public init(failedSessionsInARow: Int = 0) {
        self.failedSessionsInARow = max(0, failedSessionsInARow)
    }

    /// Re-enables PIN pairing after a lock (an action on the monitor itself).
    public mutating func unlock() -> [Action] {
        failedSessionsInARow = 0
        return [.persistFailedSessions(0)]
    }

    /// Handles PIN_PAIRING_INIT from an (untrusted) connection.
    public mutating func handleInit(
        _ message: PinPairingInit,
        context: PairingContext,
        connection: ConnectionID,
        now: ContinuousClock.Instant,
        entropy: Entropy = .random()
    ) -> [Action] {
        let inReplyTo = ControlMessageType.pinPairingInit.rawValue
        var actions = expireIfNeeded(now: now)
        if isLocked {
            return actions + [.send(.pairRejected(PairRejected(reason: .locked, attemptsRemaining: 0)))]
        }
        if let until = unused[context.clientAddress]?.waitUntil, now < until {
            let seconds = Int(((until - now) / .seconds(1)).rounded(.up))
            return actions + [
                .send(
                    .error(
                        .conflict,
                        "PIN sessions from this address were left unused; try again in \(seconds) s",
                        inReplyTo: inReplyTo))
            ]
        }
        if session != nil {
            return actions + [
                .send(
                    .error(.conflict, "another PIN pairing is in progress; try again in a minute", inReplyTo: inReplyTo)
                )
            ]
        }
        guard message.protocolVersion == 1 else {
            return actions + [
                .send(
                    .error(
                        .protocolError, "unsupported protocolVersion \(message.protocolVersion); expected 1",
                        inReplyTo: inReplyTo)),
                .close(.protocolError),
            ]
        }
        guard let nonce = PairingCrypto.decodeBase64(message.nonce, count: 16) else {
            return actions + [
                .send(.error(.protocolError, "nonce must be 16 bytes in base64", inReplyTo: inReplyTo)),
                .close(.protocolError),
            ]
        }
        guard message.listenerCertFingerprint == context.clientFingerprint.hex,
            let listenerId = PairingCrypto.canonicalUUID(message.listenerId)
        else {
            return actions + [.send(.pairRejected(PairRejected(reason: .fingerprintMismatch))), .close(.unauthorized)]
        }
        let expiresAt = now + Self.sessionLifetime
        let session = Session(
            connection: connection,
            listenerId: listenerId,
            listenerName: PeerName.sanitized(message.listenerName),
            pin: entropy.pin,
            nonce: nonce,
            expiresAt: expiresAt,
            attemptsRemaining: Self.maxAttempts,
            hadWrongPIN: false,
            address: context.clientAddress,
            touched: false,
            pairingSessionId: entropy.pairingSessionId,
            sid: [],
            ci: PINPairingKeys.channelIdentifier(
                monitor: context.monitorFingerprint, listener: context.clientFingerprint)
        )
        actions += startAttempt(of: session, pairingSessionId: entropy.pairingSessionId, now: now)
        actions += [.showPIN(entropy.pin, expiresAt: expiresAt), .scheduleExpiry(at: expiresAt)]
        return actions
    }

    /// Begins a CPace run for `session` with a fresh scalar and sid; returns its PIN_REQUIRED.
    private mutating func startAttempt(
        of session: Session,
        pairingSessionId: UUID,
        now: ContinuousClock.Instant
    ) -> [Action] {
        var current = session
        current.pairingSessionId = pairingSessionId
        current.sid = PINPairingKeys.sessionIdentifier(pairingSessionId: pairingSessionId, nonce: current.nonce)
        let attempt = CPaceInitiator(prs: Array(current.pin.digits.utf8), ci: current.ci, sid: current.sid, ad: [])
        let required = PinRequired(
            pairingSessionId: pairingSessionId.uuidString.lowercased(),
            pakeMsgA: PairingCrypto.base64(attempt.message),
            expiresInSec: max(1, Int(((current.expiresAt - now) / .seconds(1)).rounded(.up))),
            maxAttempts: current.attemptsRemaining
        )
        phase = .attempt(current, attempt)
        return [.send(.pinRequired(required))]
    }

    /// Handles PIN_SUBMIT; after a wrong PIN with attempts left, the next attempt uses `next`.
    public mutating func handleSubmit(
        _ message: PinSubmit,
        context: PairingContext,
        connection: ConnectionID,
        now: ContinuousClock.Instant,
        next: AttemptEntropy = .random()
    ) -> [Action] {
        var actions = expireIfNeeded(now: now)
        let expired = Action.send(.pairRejected(PairRejected(reason: .expired, attemptsRemaining: 0)))
        // The attempt is taken out of the state: it is used (consumed) by this submission whatever its outcome.
        var current: Session
        let attempt: CPaceInitiator
        switch phase.take() {
        case .idle:
            return actions + [expired]
        case .attempt(let session, let initiator):
            guard session.connection == connection,
                PairingCrypto.canonicalUUID(message.pairingSessionId)
                    == session.pairingSessionId.uuidString.lowercased()
            else {
                phase = .attempt(session, initiator)
                return actions + [expired]
            }
            current = session
            current.touched = true
            attempt = initiator
        }
        // The transcript must describe this very connection: our identity and the TLS-proven client.
        let transcript = message.transcript
        guard transcript.monitorId == context.monitorId.uuidString.lowercased(),
            transcript.monitorCertFingerprint == context.monitorFingerprint.hex,
            transcript.listenerCertFingerprint == context.clientFingerprint.hex,
            PairingCrypto.decodeBase64(transcript.listenerPublicKey) == context.clientPublicKeySPKI,
            PairingCrypto.canonicalUUID(transcript.listenerId) == current.listenerId,
            transcript.pairingSessionId == message.pairingSessionId
        else {
            actions += recordFailedSession()
            return actions + [
                .hidePIN, .send(.pairRejected(PairRejected(reason: .fingerprintMismatch, attemptsRemaining: 0))),
                .close(.unauthorized),
            ]
        }
        let keys: (listener: SymmetricKey, monitor: SymmetricKey)? =
            if let yb = PairingCrypto.decodeBase64(message.pakeMsgB, count: 32),
                let isk = try? attempt.finish(peerMessage: yb, peerAD: [])
            {
                PINPairingKeys.derive(isk: isk, sid: current.sid)
            } else {
                nil
            }
        if let keys,
            PairingCrypto.verify(tag: message.authTag, key: keys.listener, message: PairingCrypto.canonical(transcript))
        {
            failedSessionsInARow = 0
            unused[current.address] = nil
            let listener = TrustedListener(
                listenerId: current.listenerId,
                name: current.listenerName,
                publicKey: transcript.listenerPublicKey,
                fingerprint: context.clientFingerprint
            )
            let confirm = PairingCrypto.tag(key: keys.monitor, message: PairingCrypto.canonical(transcript))
            return actions + [
                .trust(listener), .hidePIN, .persistFailedSessions(0),
                .send(.pairAccepted(PairAccepted(monitorId: transcript.monitorId, confirmTag: confirm))),
            ]
        }
        // Wrong PIN (or a PAKE message that cannot be right): one attempt used.
        current.attemptsRemaining -= 1
        current.hadWrongPIN = true
        if current.attemptsRemaining > 0 {
            actions.append(
                .send(.pairRejected(PairRejected(reason: .invalidPIN, attemptsRemaining: current.attemptsRemaining)))
            )
            return actions + startAttempt(of: current, pairingSessionId: next.pairingSessionId, now: now)
        }
        actions += recordFailedSession()
        return actions + [
            .hidePIN, .send(.pairRejected(PairRejected(reason: .invalidPIN, attemptsRemaining: 0))),
            .close(.unauthorized),
        ]
    }

    /// The expiry timer fired (or any time passed): discards an expired session.
    public mutating func expire(now: ContinuousClock.Instant) -> [Action] {
        expireIfNeeded(now: now)
    }

    /// A connection closed: its PIN session, if any, ends.
    public mutating func connectionClosed(_ connection: ConnectionID, now: ContinuousClock.Instant) -> [Action] {
        guard let current = session, current.connection == connection else { return [] }
        return endSession(current, now: now)
    }

    private mutating func expireIfNeeded(now: ContinuousClock.Instant) -> [Action] {
        guard let current = session, now >= current.expiresAt else { return [] }
        return endSession(current, now: now)
    }

    private mutating func endSession(_ current: Session, now: ContinuousClock.Instant) -> [Action] {
        phase = .idle
        if !current.touched { countUnused(current.address, now: now) }
        return (current.hadWrongPIN ? recordFailedSession() : []) + [.hidePIN]
    }

    /// A session ended without a PIN tried: past the allowance, its address waits before the next one.
    private mutating func countUnused(_ address: String, now: ContinuousClock.Instant) {
        var record = unused[address] ?? (0, nil, now)
        record.count += 1
        record.last = now
        if record.count >= Self.unusedAllowance {
            let doublings = min(record.count - Self.unusedAllowance, 5)
            record.waitUntil = now + min(Self.unusedBackoff * (1 << doublings), Self.maximumBackoff)
        }
        unused[address] = record
        if unused.count > Self.rememberedAddresses,
            let oldest = unused.min(by: { $0.value.last < $1.value.last })?.key
        {
            unused[oldest] = nil
        }
    }

    /// A session that ended without success after at least one wrong PIN counts toward the lock.
    private mutating func recordFailedSession() -> [Action] {
        phase = .idle
        failedSessionsInARow += 1
        return [.persistFailedSessions(failedSessionsInARow)]
    }
}
