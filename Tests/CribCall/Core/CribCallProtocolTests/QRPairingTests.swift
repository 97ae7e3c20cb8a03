import CribCallProtocol
import DeviceIdentity
import Foundation
import Testing

@Suite("QR pairing, monitor and listener back to back (PROTOCOL.md §5)")
struct QRPairingTests {
    let devices: Devices
    let t0 = ContinuousClock.now
    init() throws { devices = try Devices() }

    func payload(_ token: PairingToken) -> QRPairingPayload {
        QRPairingPayload(
            monitorId: devices.monitorId, monitorName: "Nursery",
            monitorCertFingerprint: devices.monitor.fingerprint.hex,
            monitorPublicKey: Data(devices.monitor.publicKeySPKI).base64EncodedString(), pairingToken: token
        )
    }

    @Test("a scanned code pairs: the monitor trusts the TLS-proven listener, the listener verifies confirmTag")
    func success() throws {
        var verifier = QRPairingVerifier()
        let token = PairingToken.random()
        verifier.show(token: token, now: t0)
        let client = try QRPairingClient(qrText: payload(token).qrText, local: devices.local)
        #expect(client.pinnedFingerprint == devices.monitor.fingerprint)

        let outcome = verifier.handle(client.request(), context: devices.monitorContext, now: t0 + .seconds(20))
        guard case .accepted(let listener, let reply) = outcome else {
            Issue.record("expected acceptance, got \(outcome)")
            return
        }
        #expect(listener.fingerprint == devices.listener.fingerprint)
        #expect(listener.listenerId == devices.listener.deviceId.uuidString.lowercased())
        #expect(listener.name == "Dad’s Phone")
        let monitor = try client.complete(with: .pairAccepted(reply))
        #expect(monitor == TrustedMonitor(monitorId: devices.monitorId, fingerprint: devices.monitor.fingerprint))
        #expect(!verifier.isShowing(now: t0 + .seconds(21)), "an accepted token is used up")
    }

    @Test("a replayed PAIR_REQUEST is refused: the token is single use")
    func replayRefused() throws {
        var verifier = QRPairingVerifier()
        let token = PairingToken.random()
        verifier.show(token: token, now: t0)
        let request = try QRPairingClient(qrText: payload(token).qrText, local: devices.local).request()
        guard case .accepted = verifier.handle(request, context: devices.monitorContext, now: t0) else {
            Issue.record("first request must be accepted")
            return
        }
        #expect(
            verifier.handle(request, context: devices.monitorContext, now: t0)
                == .rejected(PairRejected(reason: .invalidToken)))
    }

    @Test("a forged tag is refused and does not use up the token")
    func forgedTagDoesNotConsume() throws {
        var verifier = QRPairingVerifier()
        let token = PairingToken.random()
        verifier.show(token: token, now: t0)
        let good = try QRPairingClient(qrText: payload(token).qrText, local: devices.local).request()
        var forged = good
        forged.authTag = Data(repeating: 7, count: 32).base64EncodedString()
        #expect(
            verifier.handle(forged, context: devices.monitorContext, now: t0)
                == .rejected(PairRejected(reason: .invalidToken)))
        // A tag made with a guessed token is just as wrong.
        let guessed = try QRPairingClient(qrText: payload(.random()).qrText, local: devices.local).request()
        #expect(
            verifier.handle(guessed, context: devices.monitorContext, now: t0)
                == .rejected(PairRejected(reason: .invalidToken)))
        guard case .accepted = verifier.handle(good, context: devices.monitorContext, now: t0) else {
            Issue.record("the real request must still be accepted after failed attempts")
            return
        }
    }

    @Test("after 5 minutes the token has expired, even if shown longer")
    func expiry() throws {
        var verifier = QRPairingVerifier()
        let token = PairingToken.random()
        verifier.show(token: token, now: t0, lifetime: .seconds(3600))
        let request = try QRPairingClient(qrText: payload(token).qrText, local: devices.local).request()
        #expect(
            verifier.handle(request, context: devices.monitorContext, now: t0 + .seconds(300))
                == .rejected(PairRejected(reason: .expired)))
    }

    @Test("no QR code shown → INVALID_TOKEN; hiding the code kills its token")
    func notShowing() throws {
        var verifier = QRPairingVerifier()
        let token = PairingToken.random()
        let request = try QRPairingClient(qrText: payload(token).qrText, local: devices.local).request()
        #expect(
            verifier.handle(request, context: devices.monitorContext, now: t0)
                == .rejected(PairRejected(reason: .invalidToken)))
        verifier.show(token: token, now: t0)
        verifier.hide()
        #expect(
            verifier.handle(request, context: devices.monitorContext, now: t0)
                == .rejected(PairRejected(reason: .invalidToken)))
    }

    @Test("the claimed identity must be the TLS one: fingerprint and public key")
    func identityMustMatchTLS() throws {
        var verifier = QRPairingVerifier()
        let token = PairingToken.random()
        verifier.show(token: token, now: t0)
        let request = try QRPairingClient(qrText: payload(token).qrText, local: devices.local).request()
        // Someone else's TLS certificate carrying the listener's request (e.g. a stolen QR photo + replay).
        let otherClient = Devices.context(server: devices.monitor, client: devices.impostor)
        #expect(
            verifier.handle(request, context: otherClient, now: t0)
                == .rejected(PairRejected(reason: .fingerprintMismatch)))
        var wrongKey = request
        wrongKey.listenerPublicKey = Data(devices.impostor.publicKeySPKI).base64EncodedString()
        #expect(
            verifier.handle(wrongKey, context: devices.monitorContext, now: t0)
                == .rejected(PairRejected(reason: .fingerprintMismatch)))
    }

    @Test("a request made for another monitor fails here: the tag binds the monitor fingerprint")
    func boundToMonitor() throws {
        let token = PairingToken.random()
        // The listener pinned the impostor (e.g. a doctored QR) but the token is the real monitor's.
        var doctored = payload(token)
        doctored.monitorCertFingerprint = devices.impostor.fingerprint.hex
        let request = try QRPairingClient(qrText: doctored.qrText, local: devices.local).request()
        var verifier = QRPairingVerifier()
        verifier.show(token: token, now: t0)
        #expect(
            verifier.handle(request, context: devices.monitorContext, now: t0)
                == .rejected(PairRejected(reason: .invalidToken)))
    }

    @Test("the listener refuses an acceptance it cannot verify")
    func listenerChecksConfirmTag() throws {
        let token = PairingToken.random()
        let client = try QRPairingClient(qrText: payload(token).qrText, local: devices.local)
        for reply in [
            PairAccepted(monitorId: devices.monitorId, confirmTag: nil),
            PairAccepted(monitorId: devices.monitorId, confirmTag: Data(count: 32).base64EncodedString()),
            PairAccepted(monitorId: devices.monitorId, confirmTag: client.request().authTag),  // the listener's own tag
        ] {
            let error = #expect(throws: PairingError.self) { try client.complete(with: .pairAccepted(reply)) }
            #expect(error?.code == .monitorNotAuthenticated)
        }
        let rejected = #expect(throws: PairingError.self) {
            try client.complete(with: .pairRejected(PairRejected(reason: .expired)))
        }
        #expect(rejected?.reason == .expired)
        #expect(rejected?.message.contains("show a new one") == true)
    }

    @Test(
        "QR text that is not a valid pairing code gets a clear error",
        arguments: [
            "hello", "{}", #"{"type":"monitor_pair_v9"}"#, "[1,2,3]",
        ])
    func invalidQRText(_ text: String) {
        let error = #expect(throws: PairingError.self) { try QRPairingPayload.parse(text) }
        #expect(error?.code == .invalidQRCode)
    }

    @Test("a damaged token or fingerprint in the QR code is refused")
    func damagedPayload() throws {
        var damaged = payload(.random())
        damaged.pairingToken = "too-short"
        #expect(throws: PairingError.self) { try QRPairingPayload.parse(damaged.qrText) }
        damaged = payload(.random())
        damaged.monitorCertFingerprint = "ABC"
        #expect(throws: PairingError.self) { try QRPairingPayload.parse(damaged.qrText) }
        damaged = payload(.random())
        damaged.service.version = 2
        let error = #expect(throws: PairingError.self) { try QRPairingPayload.parse(damaged.qrText) }
        #expect(error?.message.contains("update CribCall") == true)
    }

    @Test("the token is 16 bytes of base64url without padding and never printed")
    func tokenForm() throws {
        let token = PairingToken.random()
        #expect(token.base64URL.count == 22)
        #expect(!token.base64URL.contains("=") && !token.base64URL.contains("+") && !token.base64URL.contains("/"))
        #expect(PairingToken(base64URL: token.base64URL) == token)
        #expect(!"\(token)".contains(token.base64URL))
        #expect(PairingToken(base64URL: token.base64URL + "==") == nil)
        let qr = payload(token).qrText
        #expect(qr.contains("\"type\":\"monitor_pair_v1\""))
        #expect(try QRPairingPayload.parse(qr) == payload(token))
    }
}
