public import ControlTransport

/// The lifecycle of one QUIC connection as a pure state machine (no ngtcp2, no event loop): handshake, the graceful
/// close that waits for acknowledgements, the closing and draining periods of RFC 9000 §10.2, and the single end
/// that fails or completes everything waiting on the connection. ``QUICConnectionCore`` feeds it what ngtcp2 and
/// its users report and performs the actions it returns, in order.
struct ConnectionLifecycle: Sendable {
    enum Phase: Sendable, Hashable {
        case handshaking
        case established
        /// We sent CONNECTION_CLOSE and answer further packets with it.
        case closing
        /// The peer closed; we stay silent.
        case draining
        case finished
    }

    enum Action: Sendable, Hashable {
        case succeedHandshake
        /// Tell the endpoint the connection is up.
        case announceEstablished
        /// Write everything ngtcp2 has to send now.
        case writeOut
        /// Close with this application code once the deadline passes, unless everything is acknowledged first.
        case scheduleCloseDeadline(code: UInt64)
        case cancelCloseDeadline
        /// Write CONNECTION_CLOSE and send it: an application close with the code of a `.local` reason, else the
        /// transport error the caller closes with.
        case sendConnectionClose(ConnectionCloseReason)
        /// The connection is over for its users: fail the handshake if `failsHandshake` (it had not succeeded yet),
        /// fail the send waiters, finish the inbound frames, complete `closed` with the reason.
        case end(ConnectionCloseReason, failsHandshake: Bool)
        /// Stay reachable for three PTOs, then `finish`.
        case linger
        /// Cancel the timer and leave the endpoint's routing table.
        case forget
    }

    /// What to do with an incoming packet.
    enum PacketDisposition: Sendable, Hashable {
        case process
        /// Answer with our CONNECTION_CLOSE again.
        case resendClose
        case drop
    }

    private(set) var phase = Phase.handshaking
    private(set) var closedReason: ConnectionCloseReason?
    /// A graceful close waiting for its frames to be acknowledged.
    private(set) var pendingCloseCode: UInt64?
    private var handshakeResolved = false

    /// The handshake or the established connection: packets flow, timers matter.
    var isOpen: Bool { phase == .handshaking || phase == .established }

    /// Whether users may still queue frames.
    var acceptsFrames: Bool { phase == .established && pendingCloseCode == nil }

    /// What to do with a packet that arrives now.
    var packetDisposition: PacketDisposition {
        switch phase {
        case .handshaking, .established: .process
        case .closing: .resendClose
        case .draining, .finished: .drop
        }
    }

    /// ngtcp2 completed the handshake. Returns nil to refuse it when the peer's certificate was never verified
    /// (GnuTLS verifies only a certificate that arrives).
    mutating func handshakeCompleted(peerVerified: Bool) -> [Action]? {
        guard peerVerified, phase == .handshaking else { return nil }
        phase = .established
        handshakeResolved = true
        return [.succeedHandshake, .announceEstablished]
    }

    /// A user asks to close with `code`: at once during the handshake or with nothing unacknowledged, else after
    /// the sent frames are acknowledged or the deadline passes.
    mutating func closeRequested(code: UInt64, unacknowledged: Int) -> [Action] {
        switch phase {
        case .handshaking:
            return closeImmediately(.local(code: code))
        case .established:
            guard pendingCloseCode == nil else { return [] }
            if unacknowledged == 0 { return closeImmediately(.local(code: code)) }
            pendingCloseCode = code
            return [.scheduleCloseDeadline(code: code), .writeOut]
        case .closing, .draining, .finished:
            return []
        }
    }

    /// Frames were acknowledged: a pending close goes once nothing is left.
    mutating func acknowledged(unacknowledged: Int) -> [Action] {
        guard let code = pendingCloseCode, unacknowledged == 0 else { return [] }
        pendingCloseCode = nil
        return [.cancelCloseDeadline] + closeImmediately(.local(code: code))
    }

    /// The graceful close's deadline passed.
    mutating func closeDeadlinePassed() -> [Action] {
        guard let code = pendingCloseCode else { return [] }
        pendingCloseCode = nil
        return closeImmediately(.local(code: code))
    }

    /// Close now (an application close, a failed handshake, a protocol error): CONNECTION_CLOSE, end, linger.
    mutating func closeImmediately(_ reason: ConnectionCloseReason) -> [Action] {
        guard isOpen else { return [] }
        phase = .closing
        return [.sendConnectionClose(reason)] + end(reason) + [.linger]
    }

    /// The peer closed (ngtcp2 is draining): end, stay silent, linger.
    mutating func peerClosed(_ reason: ConnectionCloseReason) -> [Action] {
        guard isOpen else { return [] }
        phase = .draining
        return end(reason) + [.linger]
    }

    /// The connection is forgotten: after lingering (nil reason: the one it ended with), an idle timeout, a dropped
    /// connection or the endpoint's shutdown.
    mutating func finish(_ reason: ConnectionCloseReason?) -> [Action] {
        guard phase != .finished else { return [] }
        let actions = end(reason ?? closedReason ?? .shutdown)
        phase = .finished
        return actions + [.forget]
    }

    /// The single end: the first reason wins.
    private mutating func end(_ reason: ConnectionCloseReason) -> [Action] {
        guard closedReason == nil else { return [] }
        closedReason = reason
        let failsHandshake = !handshakeResolved
        handshakeResolved = true
        let cancel: [Action] = pendingCloseCode == nil ? [] : [.cancelCloseDeadline]
        pendingCloseCode = nil
        return cancel + [.end(reason, failsHandshake: failsHandshake)]
    }
}
