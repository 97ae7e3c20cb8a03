import ControlTransport
import Testing

@testable import QUIC

/// The QUIC connection lifecycle, driven event by event without ngtcp2.
@Suite("QUIC connection lifecycle, pure")
struct ConnectionLifecycleTests {
    @Test("a client's handshake opens the control stream; a server's does not; an unverified peer is refused")
    func handshake() {
        var client = ConnectionLifecycle()
        #expect(
            client.handshakeCompleted(peerVerified: true, isClient: true) == [
                .openControlStream, .succeedHandshake, .announceEstablished,
            ])
        #expect(client.phase == .established && client.acceptsFrames)
        var server = ConnectionLifecycle()
        #expect(
            server.handshakeCompleted(peerVerified: true, isClient: false) == [.succeedHandshake, .announceEstablished])
        var unverified = ConnectionLifecycle()
        #expect(unverified.handshakeCompleted(peerVerified: false, isClient: true) == nil)
        #expect(unverified.phase == .handshaking)
    }

    @Test("a graceful close waits for acknowledgements, then closes once; later requests change nothing")
    func gracefulClose() {
        var lifecycle = ConnectionLifecycle()
        _ = lifecycle.handshakeCompleted(peerVerified: true, isClient: false)
        #expect(lifecycle.closeRequested(code: 4, unacknowledged: 120) == [.scheduleCloseDeadline(code: 4), .writeOut])
        #expect(!lifecycle.acceptsFrames, "no new frames once a close is asked for")
        #expect(lifecycle.closeRequested(code: 9, unacknowledged: 120) == [])
        #expect(lifecycle.acknowledged(unacknowledged: 20) == [])
        #expect(
            lifecycle.acknowledged(unacknowledged: 0)
                == [
                    .cancelCloseDeadline, .sendConnectionClose(.local(code: 4)), .end(.local(code: 4), handshake: nil),
                    .linger,
                ])
        #expect(lifecycle.phase == .closing && lifecycle.packetDisposition == .resendClose)
        #expect(lifecycle.closeDeadlinePassed() == [])
        #expect(lifecycle.finish(nil) == [.forget], "the end already happened; finishing only forgets")
        #expect(lifecycle.phase == .finished && lifecycle.packetDisposition == .drop)
        #expect(lifecycle.closedReason == .local(code: 4))
    }

    @Test("the deadline closes what acknowledgements did not; nothing unacknowledged closes at once")
    func deadline() {
        var slow = ConnectionLifecycle()
        _ = slow.handshakeCompleted(peerVerified: true, isClient: true)
        _ = slow.closeRequested(code: 2, unacknowledged: 10)
        #expect(
            slow.closeDeadlinePassed() == [
                .sendConnectionClose(.local(code: 2)), .end(.local(code: 2), handshake: nil), .linger,
            ])
        var idle = ConnectionLifecycle()
        _ = idle.handshakeCompleted(peerVerified: true, isClient: true)
        #expect(
            idle.closeRequested(code: 0, unacknowledged: 0) == [
                .sendConnectionClose(.local(code: 0)), .end(.local(code: 0), handshake: nil), .linger,
            ])
    }

    @Test("an end before the handshake fails it, as a pin mismatch when the pin was refused")
    func handshakeFailures() {
        var pinned = ConnectionLifecycle()
        pinned.refusedPinnedCertificate()
        let tlsFailure = ConnectionCloseReason.transport(code: 0x12a, reason: "TLS handshake failed")
        #expect(
            pinned.closeImmediately(tlsFailure) == [
                .sendConnectionClose(tlsFailure), .end(tlsFailure, handshake: .pinMismatch), .linger,
            ])
        var timedOut = ConnectionLifecycle()
        let reason = ConnectionCloseReason.transport(code: 0, reason: "handshake timed out")
        #expect(timedOut.finish(reason) == [.end(reason, handshake: .failed(reason)), .forget])
        #expect(timedOut.closeImmediately(.local(code: 1)) == [], "nothing after the end")
    }

    @Test("the peer's close drains silently; the first reason is the one reported")
    func peerClose() {
        var lifecycle = ConnectionLifecycle()
        _ = lifecycle.handshakeCompleted(peerVerified: true, isClient: true)
        _ = lifecycle.closeRequested(code: 3, unacknowledged: 50)
        let peer = ConnectionCloseReason.peerApplication(code: 1, reason: "bye")
        #expect(lifecycle.peerClosed(peer) == [.cancelCloseDeadline, .end(peer, handshake: nil), .linger])
        #expect(lifecycle.phase == .draining && lifecycle.packetDisposition == .drop)
        #expect(lifecycle.finish(.shutdown) == [.forget])
        #expect(lifecycle.closedReason == peer)
    }
}
