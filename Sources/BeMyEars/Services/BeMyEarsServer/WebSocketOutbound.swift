import BeMyEarsCore
import Foundation
import Logging
import NIOCore
import Synchronization

/// The ``SignalingOutbound`` of the server: the open WebSockets (``SignalingSocket``), the cluster channel (if
/// several nodes share a store), and the log.
///
/// Every method returns at once: frames are queued on the socket and written by its event loop. A message is
/// encoded once into a whole WebSocket frame; a PRESENCE list sent to many callers is encoded once for all of them
/// and the same bytes are written to each socket.
final class WebSocketOutbound: SignalingOutbound {
    private let sockets = Mutex<[SessionID: SignalingSocket]>([:])
    /// The frame of the last PRESENCE list encoded (the hub sends the same list to every caller of a refresh).
    private let lastPresence = Mutex<(list: [Username], frame: ByteBuffer)?>(nil)
    private let cluster: (any SignalingCluster)?
    private let logger: Logger
    private let wakes: AsyncStream<Date>.Continuation
    /// The hub's wake-up requests, for ``HubWakeService``.
    let wakeRequests: AsyncStream<Date>

    init(cluster: (any SignalingCluster)?, logger: Logger) {
        self.cluster = cluster
        self.logger = logger
        (wakeRequests, wakes) = AsyncStream.makeStream(of: Date.self)
    }

    /// Registers a new connection.
    func attach(_ socket: SignalingSocket) {
        sockets.withLock { $0[socket.session] = socket }
    }

    /// Forgets a connection (its socket is gone).
    func detach(_ socket: SignalingSocket) {
        sockets.withLock { sockets in
            if sockets[socket.session] === socket { sockets[socket.session] = nil }
        }
    }

    /// Closes every socket with `code` (this node was taken for dead by the others: its sessions are gone from the
    /// shared store, so clients must reconnect and register again; or the server shuts down: 1001).
    func closeAll(code: CloseCode) {
        for socket in sockets.withLock({ Array($0.values) }) {
            socket.close(code)
        }
    }

    /// Drops every connection whose socket has taken nothing for `timeout` while a frame waits for it
    /// (``SignalingSocket/dropIfStalled(now:after:)``).
    /// - Returns: How many were dropped.
    @discardableResult
    func dropStalled(now: NIODeadline, after timeout: TimeAmount) -> Int {
        sockets.withLock { Array($0.values) }.count(where: { $0.dropIfStalled(now: now, after: timeout) })
    }

    /// Open connections (for statistics, shutdown and tests).
    var connectionCount: Int {
        sockets.withLock { $0.count }
    }

    private func socket(_ session: SessionID) -> SignalingSocket? {
        sockets.withLock { $0[session] }
    }

    // MARK: SignalingOutbound

    func send(_ envelope: Envelope, to session: SessionID) {
        socket(session)?.send(WebSocketFrames.text(EnvelopeCodec.encode(envelope)))
    }

    func sendPresence(_ interpreters: [Username], to session: SessionID) {
        guard let socket = socket(session) else { return }
        // The same array (compared by identity first) for every caller of one refresh: encoded once.
        if let last = lastPresence.withLock({ $0 }), last.list == interpreters {
            socket.send(last.frame)
            return
        }
        let frame = WebSocketFrames.text(EnvelopeCodec.encode(.presence(interpreters)))
        lastPresence.withLock { $0 = (interpreters, frame) }
        socket.send(frame)
    }

    func close(_ session: SessionID, code: CloseCode) {
        socket(session)?.close(code)
    }

    func forward(_ envelope: Envelope, to session: SessionID, on node: NodeID) {
        cluster?.forward(envelope, to: session, on: node)
    }

    func publishPresenceChange() {
        cluster?.publishPresenceChange()
    }

    func wake(at time: Date) {
        wakes.yield(time)
    }

    /// Seed §18: the record carries only allowed fields (event, callId, sessionId, role, an abuse report's
    /// offender, statistics); the log handler adds the `YYYY-MM-DD HH:MM:SS` timestamp.
    func log(_ record: SignalingLogRecord) {
        let message = Logger.Message(
            stringLiteral: record.fields.map { "\($0.name)=\($0.value)" }.joined(separator: " "))
        switch record.event {
        case .internalError: logger.error(message)
        case .messageRefused, .rateLimited, .registrationRefused: logger.notice(message)
        default: logger.info(message)
        }
    }
}
