import ControlTransport
import Testing

@testable import QUIC

/// The QUIC connection lifecycle, driven event by event without ngtcp2.
@Suite("QUIC connection lifecycle, pure")
struct ConnectionLifecycleTests {
    @Test("a verified handshake establishes the connection and succeeds once; an unverified peer is refused")
    func handshake() {
        var lifecycle = ConnectionLifecycle()
        #expect(lifecycle.handshakeCompleted(peerVerified: true) == [.succeedHandshake, .announceEstablished])
        #expect(lifecycle.phase == .established && lifecycle.acceptsFrames)
        #expect(lifecycle.handshakeCompleted(peerVerified: true) == nil, "a second completion is refused")
        var unverified = ConnectionLifecycle()
        #expect(unverified.handshakeCompleted(peerVerified: false) == nil)
        #expect(unverified.phase == .handshaking)
    }

    @Test("a graceful close waits for acknowledgements, then closes once; later requests change nothing")
    func gracefulClose() {
        var lifecycle = ConnectionLifecycle()
        _ = lifecycle.handshakeCompleted(peerVerified: true)
        #expect(lifecycle.closeRequested(code: 4, unacknowledged: 120) == [.scheduleCloseDeadline(code: 4), .writeOut])
        #expect(!lifecycle.acceptsFrames, "no new frames once a close is asked for")
        #expect(lifecycle.closeRequested(code: 9, unacknowledged: 120) == [])
        #expect(lifecycle.acknowledged(unacknowledged: 20) == [])
        #expect(
            lifecycle.acknowledged(unacknowledged: 0)
                == [
                    .cancelCloseDeadline, .sendConnectionClose(.local(code: 4)),
                    .end(.local(code: 4), failsHandshake: false),
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
        _ = slow.handshakeCompleted(peerVerified: true)
        _ = slow.closeRequested(code: 2, unacknowledged: 10)
        #expect(
            slow.closeDeadlinePassed() == [
                .sendConnectionClose(.local(code: 2)), .end(.local(code: 2), failsHandshake: false), .linger,
            ])
        var idle = ConnectionLifecycle()
        _ = idle.handshakeCompleted(peerVerified: true)
        #expect(
            idle.closeRequested(code: 0, unacknowledged: 0) == [
                .sendConnectionClose(.local(code: 0)), .end(.local(code: 0), failsHandshake: false), .linger,
            ])
    }

    @Test("an end before the handshake fails it, once; an end after it does not")
    func handshakeFailures() {
        var refused = ConnectionLifecycle()
        let tlsFailure = ConnectionCloseReason.transport(code: 0x12a, reason: "TLS handshake failed")
        #expect(
            refused.closeImmediately(tlsFailure) == [
                .sendConnectionClose(tlsFailure), .end(tlsFailure, failsHandshake: true), .linger,
            ])
        var timedOut = ConnectionLifecycle()
        let reason = ConnectionCloseReason.transport(code: 0, reason: "handshake timed out")
        #expect(timedOut.finish(reason) == [.end(reason, failsHandshake: true), .forget])
        #expect(timedOut.closeImmediately(.local(code: 1)) == [], "nothing after the end")
        var established = ConnectionLifecycle()
        _ = established.handshakeCompleted(peerVerified: true)
        #expect(established.finish(.idleTimeout) == [.end(.idleTimeout, failsHandshake: false), .forget])
    }

    @Test("the peer's close drains silently; the first reason is the one reported")
    func peerClose() {
        var lifecycle = ConnectionLifecycle()
        _ = lifecycle.handshakeCompleted(peerVerified: true)
        _ = lifecycle.closeRequested(code: 3, unacknowledged: 50)
        let peer = ConnectionCloseReason.peerApplication(code: 1, reason: "bye")
        #expect(lifecycle.peerClosed(peer) == [.cancelCloseDeadline, .end(peer, failsHandshake: false), .linger])
        #expect(lifecycle.phase == .draining && lifecycle.packetDisposition == .drop)
        #expect(lifecycle.finish(.shutdown) == [.forget])
        #expect(lifecycle.closedReason == peer)
    }
}
