import CanonicalJSON
import CribCallProtocol
import Crypto
import DeviceIdentity
import Foundation
import Testing

@testable import CPace

@Suite("PIN pairing with CPace, monitor and listener back to back (PROTOCOL.md §6)")
struct PINPairingTests {
    let devices: Devices
    let t0 = ContinuousClock.now
    let pin = PIN("482913")!
    init() throws { devices = try Devices() }

    func newListener(pinning fingerprint: CertificateFingerprint? = nil) -> PINPairingListener {
        PINPairingListener(
            local: devices.local, monitorId: devices.monitorId,
            monitorFingerprint: fingerprint ?? devices.monitor.fingerprint)
    }

    /// Starts a session: returns the monitor's actions for PIN_PAIRING_INIT and the listener after PIN_REQUIRED.
    func begin(
        _ monitor: inout PINPairingMonitor,
        connection: UInt64 = 1,
        at time: ContinuousClock.Instant? = nil
    ) throws -> (PINPairingListener, [PINPairingMonitor.Action]) {
        var listener = newListener()
        let actions = monitor.handleInit(
            listener.start(), context: devices.monitorContext, connection: connection,
            now: time ?? t0, entropy: .init(pin: pin, pairingSessionId: UUID()))
        if let required = actions.sent.first, case .pinRequired = required {
            _ = try listener.handle(required)
        }
        return (listener, actions)
    }

    @Test("the right PIN pairs both sides; each trusts exactly the TLS-proven peer")
    func success() throws {
        var monitor = PINPairingMonitor()
        var listener = newListener()
        let start = monitor.handleInit(
            listener.start(), context: devices.monitorContext, connection: 1, now: t0,
            entropy: .init(pin: pin, pairingSessionId: UUID()))
        #expect(start.contains(.showPIN(pin, expiresAt: t0 + .seconds(60))))
        #expect(start.contains(.scheduleExpiry(at: t0 + .seconds(60))))
        let required = try #require(start.sent.first?.pinRequired)
        #expect(required.expiresInSec == 60 && required.maxAttempts == 3)
        #expect(try listener.handle(.pinRequired(required)) == .enterPIN(expiresInSec: 60, attemptsRemaining: 3))

        let submit = try listener.submit(pin: "482913")
        #expect(submit.transcript.monitorCertFingerprint == devices.monitor.fingerprint.hex)
        let done = monitor.handleSubmit(submit, context: devices.monitorContext, connection: 1, now: t0 + .seconds(9))
        let trusted = try #require(done.trusted)
        #expect(trusted.fingerprint == devices.listener.fingerprint)
        #expect(trusted.publicKey == Data(devices.listener.publicKeySPKI).base64EncodedString())
        #expect(done.contains(.hidePIN) && done.closeCode == nil && done.persistedCounter == 0)
        let accepted = try #require(done.sent.last)
        #expect(
            try listener.handle(accepted)
                == .paired(
                    TrustedMonitor(
                        monitorId: devices.monitorId,
                        fingerprint: devices.monitor.fingerprint)))
        let monitorHasActiveSession = monitor.hasActiveSession
        #expect(!monitorHasActiveSession)
    }

    @Test("a wrong PIN keeps the connection open with a fresh CPace run; the third wrong PIN closes with code 2")
    func wrongPINs() throws {
        var monitor = PINPairingMonitor()
        var (listener, start) = try begin(&monitor)
        var previousYa = try #require(start.sent.first?.pinRequired?.pakeMsgA)
        for remaining in [2, 1] {
            let actions = monitor.handleSubmit(
                try listener.submit(pin: "999998"), context: devices.monitorContext,
                connection: 1, now: t0 + .seconds(5))
            #expect(actions.sent.first?.rejected == PairRejected(reason: .invalidPIN, attemptsRemaining: remaining))
            #expect(actions.closeCode == nil)
            #expect(try listener.handle(actions.sent[0]) == .tryAgain(attemptsRemaining: remaining))
            let next = try #require(actions.sent.last?.pinRequired, "a fresh PIN_REQUIRED follows the rejection")
            #expect(next.pakeMsgA != previousYa, "CPace scalars must not be reused (draft §10.9)")
            #expect(next.maxAttempts == remaining)
            previousYa = next.pakeMsgA
            #expect(try listener.handle(actions.sent[1]) == .enterPIN(expiresInSec: 55, attemptsRemaining: remaining))
        }
        let last = monitor.handleSubmit(
            try listener.submit(pin: "999998"), context: devices.monitorContext,
            connection: 1, now: t0 + .seconds(6))
        #expect(last.sent.first?.rejected == PairRejected(reason: .invalidPIN, attemptsRemaining: 0))
        #expect(last.closeCode == .unauthorized)
        #expect(last.contains(.hidePIN) && last.persistedCounter == 1)
        let monitorHasActiveSession = monitor.hasActiveSession
        #expect(!monitorHasActiveSession)
        let error = #expect(throws: PairingError.self) { try listener.handle(last.sent[0]) }
        #expect(error?.reason == .invalidPIN)
    }

    @Test("each attempt after a wrong PIN takes its session id from the injected entropy; a stale id is refused")
    func attemptEntropy() throws {
        var monitor = PINPairingMonitor()
        var (listener, start) = try begin(&monitor)
        let first = try #require(start.sent.first?.pinRequired)
        let nextId = UUID(uuidString: "00000000-0000-4000-8000-00000000002a")!
        let wrong = monitor.handleSubmit(
            try listener.submit(pin: "000001"), context: devices.monitorContext, connection: 1, now: t0,
            next: .init(pairingSessionId: nextId))
        let second = try #require(wrong.sent.last?.pinRequired)
        #expect(second.pairingSessionId == nextId.uuidString.lowercased())
        #expect(second.pairingSessionId != first.pairingSessionId)
        // A submission for the first attempt's id no longer matches the session: refused, and the attempt stays.
        for message in wrong.sent { _ = try listener.handle(message) }
        let fresh = try listener.submit(pin: pin.digits)
        let stale = PinSubmit(
            pairingSessionId: first.pairingSessionId, pakeMsgB: fresh.pakeMsgB, transcript: fresh.transcript,
            authTag: fresh.authTag)
        let refused = monitor.handleSubmit(stale, context: devices.monitorContext, connection: 1, now: t0)
        #expect(refused.sent.first?.rejected == PairRejected(reason: .expired, attemptsRemaining: 0))
        let stillActive = monitor.hasActiveSession
        #expect(stillActive)
        let right = monitor.handleSubmit(fresh, context: devices.monitorContext, connection: 1, now: t0)
        #expect(right.trusted != nil)
    }

    @Test("the right PIN after a wrong one still pairs")
    func rightAfterWrong() throws {
        var monitor = PINPairingMonitor()
        var (listener, _) = try begin(&monitor)
        let wrong = monitor.handleSubmit(
            try listener.submit(pin: "000001"), context: devices.monitorContext,
            connection: 1, now: t0)
        for message in wrong.sent { _ = try listener.handle(message) }
        let right = monitor.handleSubmit(
            try listener.submit(pin: pin.digits), context: devices.monitorContext,
            connection: 1, now: t0)
        #expect(right.trusted != nil)
        guard case .paired = try listener.handle(try #require(right.sent.last)) else {
            Issue.record("listener must be paired")
            return
        }
    }

    @Test("after 60 s the session is gone: PIN_SUBMIT → EXPIRED with 0 attempts")
    func expiry() throws {
        var monitor = PINPairingMonitor()
        var (listener, _) = try begin(&monitor)
        let submit = try listener.submit(pin: pin.digits)
        let late = monitor.handleSubmit(submit, context: devices.monitorContext, connection: 1, now: t0 + .seconds(60))
        #expect(late.sent == [.pairRejected(PairRejected(reason: .expired, attemptsRemaining: 0))])
        #expect(late.trusted == nil && late.contains(.hidePIN))
        #expect(monitor.expire(now: t0 + .seconds(61)).isEmpty, "already expired")
    }

    @Test("the expiry timer hides the PIN")
    func expiryTimer() throws {
        var monitor = PINPairingMonitor()
        _ = try begin(&monitor)
        #expect(monitor.expire(now: t0 + .seconds(59)).isEmpty)
        #expect(monitor.expire(now: t0 + .seconds(60)) == [.hidePIN])
        let monitorHasActiveSession = monitor.hasActiveSession
        #expect(!monitorHasActiveSession)
    }

    @Test("one PIN session at a time: a second PIN_PAIRING_INIT gets CONFLICT and its connection stays open")
    func conflict() throws {
        var monitor = PINPairingMonitor()
        _ = try begin(&monitor, connection: 1)
        var other = newListener()
        let second = monitor.handleInit(
            other.start(), context: devices.monitorContext, connection: 2, now: t0 + .seconds(1))
        guard case .error(let error) = second.sent.first else {
            Issue.record("expected ERROR, got \(second)")
            return
        }
        #expect(error.errorCode == .conflict && error.inReplyTo == "PIN_PAIRING_INIT")
        #expect(second.closeCode == nil)
        // Once the first expires, a new session can start.
        let third = monitor.handleInit(
            other.start(), context: devices.monitorContext, connection: 2, now: t0 + .seconds(61))
        #expect(third.sent.last?.pinRequired != nil)
    }

    @Test("an address that leaves PIN sessions unused must wait, longer each time; other addresses are not held up")
    func unusedSessions() throws {
        var monitor = PINPairingMonitor()
        var hog = devices.monitorContext
        hog.clientAddress = "192.0.2.66"
        var parent = devices.monitorContext
        parent.clientAddress = "192.0.2.10"
        func start(_ context: PairingContext, connection: UInt64, at time: ContinuousClock.Instant)
            -> [PINPairingMonitor.Action]
        {
            var listener = newListener()
            return monitor.handleInit(
                listener.start(), context: context, connection: connection, now: time,
                entropy: .init(pin: pin, pairingSessionId: UUID()))
        }
        func refusal(_ actions: [PINPairingMonitor.Action]) -> String? {
            if case .error(let error) = actions.sent.first, error.errorCode == .conflict { error.message } else { nil }
        }
        // Two sessions left unused: one expires, one's connection closes before any PIN.
        #expect(start(hog, connection: 1, at: t0).sent.last?.pinRequired != nil)
        _ = monitor.expire(now: t0 + .seconds(60))
        #expect(start(hog, connection: 2, at: t0 + .seconds(60)).sent.last?.pinRequired != nil)
        _ = monitor.connectionClosed(2, now: t0 + .seconds(61))
        // Now it waits a minute; a parent on another address pairs meanwhile.
        let held = refusal(start(hog, connection: 3, at: t0 + .seconds(62)))
        #expect(held == "PIN sessions from this address were left unused; try again in 59 s", "\(held ?? "let in")")
        var listener = newListener()
        let parentStart = monitor.handleInit(
            listener.start(), context: parent, connection: 4, now: t0 + .seconds(62),
            entropy: .init(pin: pin, pairingSessionId: UUID()))
        _ = try listener.handle(try #require(parentStart.sent.last))
        let paired = monitor.handleSubmit(
            try listener.submit(pin: pin.digits), context: parent, connection: 4, now: t0 + .seconds(63))
        #expect(paired.trusted != nil)
        // After the wait one more session; left unused too, the next wait is twice as long.
        #expect(start(hog, connection: 5, at: t0 + .seconds(121)).sent.last?.pinRequired != nil)
        _ = monitor.expire(now: t0 + .seconds(181))
        #expect(refusal(start(hog, connection: 6, at: t0 + .seconds(182)))?.contains("try again in 119 s") == true)
        #expect(start(hog, connection: 7, at: t0 + .seconds(301)).sent.last?.pinRequired != nil)
    }

    @Test("a PIN_SUBMIT from another connection cannot touch the session")
    func otherConnection() throws {
        var monitor = PINPairingMonitor()
        var (listener, _) = try begin(&monitor, connection: 1)
        let submit = try listener.submit(pin: pin.digits)
        let actions = monitor.handleSubmit(submit, context: devices.monitorContext, connection: 2, now: t0)
        #expect(actions.sent.first?.rejected?.reason == .expired)
        let monitorHasActiveSession = monitor.hasActiveSession
        #expect(monitorHasActiveSession)
    }

    @Test("10 failed sessions in a row lock PIN pairing; the counter survives a restart; unlocking re-enables it")
    func lockout() throws {
        var monitor = PINPairingMonitor()
        for round in 1...PINPairingMonitor.lockThreshold {
            var (listener, _) = try begin(&monitor, at: t0 + .seconds(round * 100))
            for _ in 0..<3 {
                let actions = monitor.handleSubmit(
                    try listener.submit(pin: "999998"), context: devices.monitorContext,
                    connection: 1, now: t0 + .seconds(round * 100 + 1))
                for message in actions.sent { _ = try? listener.handle(message) }
                if actions.closeCode != nil { #expect(actions.persistedCounter == round) }
            }
        }
        let monitorIsLocked = monitor.isLocked
        #expect(monitorIsLocked)
        var listener = newListener()
        let locked = monitor.handleInit(
            listener.start(), context: devices.monitorContext, connection: 5, now: t0 + .seconds(5000))
        #expect(locked.sent == [.pairRejected(PairRejected(reason: .locked, attemptsRemaining: 0))])
        #expect(!locked.contains { if case .showPIN = $0 { true } else { false } })

        var restarted = PINPairingMonitor(failedSessionsInARow: monitor.failedSessionsInARow)
        let lockedAfterRestart = restarted.isLocked
        #expect(lockedAfterRestart)
        let unlocked = restarted.unlock()
        #expect(unlocked == [.persistFailedSessions(0)])
        let lockedAfterUnlock = restarted.isLocked
        #expect(!lockedAfterUnlock)
        let again = restarted.handleInit(listener.start(), context: devices.monitorContext, connection: 5, now: t0)
        #expect(again.sent.first?.pinRequired != nil)
    }

    @Test("a success resets the failure counter; expired sessions without a wrong PIN do not count")
    func counterSemantics() throws {
        var monitor = PINPairingMonitor(failedSessionsInARow: 7)
        _ = try begin(&monitor)
        let expired = monitor.expire(now: t0 + .seconds(60))
        #expect(expired == [.hidePIN])
        let monitorFailedSessionsInARow = monitor.failedSessionsInARow
        #expect(monitorFailedSessionsInARow == 7)
        var (listener, _) = try begin(&monitor, at: t0 + .seconds(100))
        let done = monitor.handleSubmit(
            try listener.submit(pin: pin.digits), context: devices.monitorContext,
            connection: 1, now: t0 + .seconds(101))
        let counterAfterSuccess = monitor.failedSessionsInARow
        #expect(done.trusted != nil && counterAfterSuccess == 0)
    }

    @Test("a replayed PIN_SUBMIT after success is refused")
    func replay() throws {
        var monitor = PINPairingMonitor()
        var (listener, _) = try begin(&monitor)
        let submit = try listener.submit(pin: pin.digits)
        #expect(monitor.handleSubmit(submit, context: devices.monitorContext, connection: 1, now: t0).trusted != nil)
        let replayed = monitor.handleSubmit(submit, context: devices.monitorContext, connection: 1, now: t0)
        #expect(replayed.trusted == nil)
        #expect(replayed.sent.first?.rejected?.reason == .expired)
    }

    @Test("a forged authTag or a tampered transcript never pairs")
    func forgery() throws {
        var monitor = PINPairingMonitor()
        var (listener, _) = try begin(&monitor)
        var forged = try listener.submit(pin: pin.digits)
        forged.authTag = Data(repeating: 1, count: 32).base64EncodedString()
        let first = monitor.handleSubmit(forged, context: devices.monitorContext, connection: 1, now: t0)
        #expect(first.trusted == nil && first.sent.first?.rejected?.reason == .invalidPIN)
        for message in first.sent { _ = try listener.handle(message) }

        var tampered = try listener.submit(pin: pin.digits)
        tampered.transcript.listenerPublicKey = Data(devices.impostor.publicKeySPKI).base64EncodedString()
        let second = monitor.handleSubmit(tampered, context: devices.monitorContext, connection: 1, now: t0)
        #expect(second.trusted == nil)
        #expect(second.sent.first?.rejected?.reason == .fingerprintMismatch)
        #expect(second.closeCode == .unauthorized)
    }

    @Test("a listener claiming another certificate than its TLS one is refused at PIN_PAIRING_INIT")
    func initFingerprintMismatch() throws {
        var monitor = PINPairingMonitor()
        var listener = newListener()
        let context = Devices.context(server: devices.monitor, client: devices.impostor)
        let actions = monitor.handleInit(listener.start(), context: context, connection: 1, now: t0)
        #expect(actions.sent == [.pairRejected(PairRejected(reason: .fingerprintMismatch))])
        let monitorHasActiveSession = monitor.hasActiveSession
        #expect(actions.closeCode == .unauthorized && !monitorHasActiveSession)
    }

    @Test("the listener refuses a PAIR_ACCEPTED whose confirmTag it cannot verify")
    func listenerRefusesUnconfirmedAcceptance() throws {
        var monitor = PINPairingMonitor()
        var (listener, _) = try begin(&monitor)
        _ = try listener.submit(pin: pin.digits)
        let error = #expect(throws: PairingError.self) {
            try listener.handle(
                .pairAccepted(
                    PairAccepted(
                        monitorId: devices.monitorId,
                        confirmTag: Data(count: 32).base64EncodedString())))
        }
        #expect(error?.code == .monitorNotAuthenticated)
    }

    /// A fake monitor announces the real monitor's id over mDNS with its own certificate (it cannot present
    /// the real one). The listener pins the fake fingerprint; the user types the real monitor's PIN.
    @Test("a fake monitor fails both ways and cannot test PINs offline")
    func fakeMonitor() throws {
        // The attacker relays the listener's PIN_PAIRING_INIT to the real monitor, connecting with its own cert,
        // rewriting the claimed fingerprint so the monitor starts a session and shows the PIN.
        var realMonitor = PINPairingMonitor()
        let relayContext = Devices.context(server: devices.monitor, client: devices.impostor)
        var victim = newListener(pinning: devices.impostor.fingerprint)
        var relayedInit = victim.start()
        let untouched = realMonitor.handleInit(relayedInit, context: relayContext, connection: 9, now: t0)
        #expect(untouched.sent.first?.rejected?.reason == .fingerprintMismatch, "an honest relay fails at once")
        relayedInit.listenerCertFingerprint = devices.impostor.fingerprint.hex
        let shown = realMonitor.handleInit(
            relayedInit, context: relayContext, connection: 9, now: t0,
            entropy: .init(pin: pin, pairingSessionId: UUID()))
        let required = try #require(shown.sent.first)
        _ = try victim.handle(required)
        // The user types the real PIN; the listener's CPace uses the fingerprints it saw (the fake one).
        let submit = try victim.submit(pin: pin.digits)

        // Way 1: relayed to the real monitor, unchanged → the transcript names the wrong monitor.
        let relayed = realMonitor.handleSubmit(submit, context: relayContext, connection: 9, now: t0)
        #expect(relayed.trusted == nil && relayed.closeCode == .unauthorized)

        // Way 1b: relayed with the transcript rewritten to match what the real monitor sees → tag fails.
        let shownAgain = realMonitor.handleInit(
            relayedInit, context: relayContext, connection: 9, now: t0 + .seconds(1),
            entropy: .init(pin: pin, pairingSessionId: UUID()))
        var victim2 = newListener(pinning: devices.impostor.fingerprint)
        _ = victim2.start()
        let required2 = try #require(shownAgain.sent.first)
        // (the victim's nonce differs from the relayed one; the attacker forwards the monitor's challenge anyway)
        _ = try victim2.handle(required2)
        var rewritten = try victim2.submit(pin: pin.digits)
        rewritten.transcript.monitorCertFingerprint = devices.monitor.fingerprint.hex
        rewritten.transcript.listenerCertFingerprint = devices.impostor.fingerprint.hex
        rewritten.transcript.listenerPublicKey = Data(devices.impostor.publicKeySPKI).base64EncodedString()
        rewritten.transcript.listenerId = relayedInit.listenerId
        let forged = realMonitor.handleSubmit(rewritten, context: relayContext, connection: 9, now: t0 + .seconds(1))
        #expect(forged.trusted == nil, "the real monitor must never trust through a relay")

        // Way 2: the fake monitor answers the victim itself; it cannot produce a confirmTag the victim accepts.
        var victim3 = newListener(pinning: devices.impostor.fingerprint)
        let nonce = (0..<16).map { UInt8($0) }
        _ = victim3.start(nonce: nonce)
        let pairingSessionId = UUID()
        let sid = withUnsafeBytes(of: pairingSessionId.uuid) { Array($0) } + nonce
        let ciVictim = CPace.lvCat([
            Array("cribcall/pin/v1".utf8), devices.impostor.fingerprint.bytes,
            devices.listener.fingerprint.bytes,
        ])
        let attackerScalar = (0..<32).map { _ in UInt8.random(in: 0...255) }
        let attackerGuess = "111112"
        let attacker = try CPaceInitiator(
            prs: Array(attackerGuess.utf8), ci: ciVictim, sid: sid, scalar: attackerScalar)
        _ = try victim3.handle(
            .pinRequired(
                PinRequired(
                    pairingSessionId: pairingSessionId.uuidString.lowercased(),
                    pakeMsgA: Data(attacker.message).base64EncodedString(), expiresInSec: 60, maxAttempts: 3)))
        let captured = try victim3.submit(pin: pin.digits)  // the real PIN, typed by the user
        let yb = try #require(Data(base64Encoded: captured.pakeMsgB).map(Array.init))
        let transcriptBytes = try canonical(captured.transcript)

        // Offline dictionary attack: for each candidate PIN (the real one included), everything the attacker can
        // compute from its own scalar and the captured message. No candidate verifies the listener's tag.
        var candidates = (0..<300).map { String(format: "%06d", ($0 * 3331 + 17) % 1_000_000) }
        candidates.append(pin.digits)
        for candidate in candidates where candidate != attackerGuess {
            let trial = try CPaceInitiator(prs: Array(candidate.utf8), ci: ciVictim, sid: sid, scalar: attackerScalar)
            guard let isk = try? trial.finish(peerMessage: yb) else { continue }
            let key = isk.withUnsafeBytes { ikm in
                HKDF<SHA256>.deriveKey(
                    inputKeyMaterial: SymmetricKey(data: ikm), salt: sid,
                    info: Array("cribcall/pin/v1 listener".utf8), outputByteCount: 32)
            }
            let tag = Data(HMAC<SHA256>.authenticationCode(for: transcriptBytes, using: key)).base64EncodedString()
            #expect(tag != captured.authTag, "candidate \(candidate) must not be testable offline")
        }
        // And the seed's scheme (HKDF over an X25519 secret with the PIN in `info`) would have been testable:
        // the attacker cannot even form it here, because it never learns an X25519 secret shared with the victim.

        // The attacker's only chance was its single online guess, which was wrong: the fake acceptance fails.
        let fakeAccept = PairAccepted(monitorId: devices.monitorId, confirmTag: Data(count: 32).base64EncodedString())
        #expect(throws: PairingError.self) { try victim3.handle(.pairAccepted(fakeAccept)) }
    }

    /// The JCS form the protocol authenticates.
    func canonical(_ transcript: PairingTranscript) throws -> [UInt8] {
        try JSONValueEncoder().encode(transcript).canonicalBytes()
    }

    @Test("PINs are 6 digits, uniform over the allowed ones, and never the obvious ones")
    func pinPolicy() {
        for text in ["000000", "111111", "999999", "123456", "654321", "12345", "1234567", "12a456", "١٢٣٤٥٦"] {
            #expect(PIN(text) == nil, "\(text) must be refused")
        }
        #expect(PIN("482913")?.digits == "482913")
        #expect("\(PIN("482913")!)" == "PIN(******)")
        var seen = Set<String>()
        var generator = SystemRandomNumberGenerator()
        var firstDigits = [Int](repeating: 0, count: 10)
        for _ in 0..<5000 {
            let pin = PIN.random(using: &generator)
            #expect(PIN(pin.digits) != nil)
            seen.insert(pin.digits)
            firstDigits[Int(pin.digits.utf8.first! - 48)] += 1
        }
        #expect(seen.count > 4900, "PINs should rarely repeat")
        #expect(firstDigits.allSatisfy { $0 > 350 && $0 < 650 }, "leading digits should be uniform: \(firstDigits)")
    }

    @Test("the listener refuses a malformed PIN before running CPace")
    func malformedPIN() throws {
        var monitor = PINPairingMonitor()
        var (listener, _) = try begin(&monitor)
        let error = #expect(throws: PairingError.self) { try listener.submit(pin: "12 34") }
        #expect(error?.code == .invalidPINFormat)
    }
}
