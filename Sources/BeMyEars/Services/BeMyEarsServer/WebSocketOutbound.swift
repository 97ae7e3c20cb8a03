import BeMyEarsCore
import Foundation
import Logging
import Synchronization

/// The ``SignalingOutbound`` of the server: one ``SessionOutbox`` per open WebSocket, the cluster channel (if
/// several nodes share a store), and the log.
///
/// Every method returns at once: frames are queued on the session's outbox and written by its connection's task.
final class WebSocketOutbound: SignalingOutbound {
    private let outboxes = Mutex<[SessionID: SessionOutbox]>([:])
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

    /// Registers the outbox of a new connection.
    func attach(_ outbox: SessionOutbox, for session: SessionID) {
        outboxes.withLock { $0[session] = outbox }
    }

    /// Forgets a connection's outbox (its socket is gone) and stops it.
    func detach(_ session: SessionID) {
        outboxes.withLock { $0.removeValue(forKey: session) }?.finish()
    }

    /// Closes every socket with `code` (this node was taken for dead by the others: its sessions are gone from the
    /// shared store, so clients must reconnect and register again).
    func closeAll(code: CloseCode) {
        for outbox in outboxes.withLock({ Array($0.values) }) {
            outbox.close(code)
        }
    }

    /// Drops every connection whose socket has taken nothing for `timeout` while a frame waits for it
    /// (``SessionOutbox/dropIfStalled(now:after:)``).
    /// - Returns: How many were dropped.
    @discardableResult
    func dropStalled(now: ContinuousClock.Instant, after timeout: Duration) -> Int {
        outboxes.withLock { Array($0.values) }.count(where: { $0.dropIfStalled(now: now, after: timeout) })
    }

    /// Open connections (for statistics and tests).
    var connectionCount: Int {
        outboxes.withLock { $0.count }
    }

    private func outbox(_ session: SessionID) -> SessionOutbox? {
        outboxes.withLock { $0[session] }
    }

    // MARK: SignalingOutbound

    func send(_ envelope: Envelope, to session: SessionID) {
        outbox(session)?.enqueue(EnvelopeCodec.encode(envelope))
    }

    func close(_ session: SessionID, code: CloseCode) {
        outbox(session)?.close(code)
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
