import BeMyEarsCore
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// The receiving half: one `LISTEN` connection, notices handled one at a time in channel order.
extension PostgresClusterBus {
    /// The listener was restarted because the node's own echo stopped arriving.
    struct ListenerWentDeaf: Error {}
    /// The notification sequence ended without an error.
    struct ListenerEnded: Error {}

    /// How long without the node's own echo before its listener is taken for deaf and reconnected.
    var echoTimeout: Duration { configuration.heartbeatInterval * 3 + .seconds(1) }

    /// How long a `LISTEN` session may take to start listening before it is taken for stuck.
    var listenSetupTimeout: Duration { max(echoTimeout, .seconds(10)) }

    func listenLoop(_ hub: SignalingHub) async {
        var delay = Duration.milliseconds(100)
        var attempt = 0
        while !Task.isCancelled {
            attempt += 1
            let listened = FirstOutcome<Void>()
            do {
                try await supervisedListen(hub, isReconnect: attempt > 1) { listened.markListening() }
            } catch {
                if Task.isCancelled { break }
                logger.warning(
                    "bemyears.bus: listening stopped; reconnecting",
                    metadata: ["node": "\(node)", "error": "\(loggable(error))"]
                )
            }
            if listened.reachedListening { delay = .milliseconds(100) }
            setListening(false)
            guard await pause(delay) else { break }
            delay = min(delay * 2, .seconds(5))
        }
    }

    /// Runs one `LISTEN` session in a task of its own and gives up on it (cancelled, and left behind) when it does
    /// not end by itself: when it has not started listening within ``listenSetupTimeout``, has been deaf for twice
    /// ``echoTimeout``, or has not ended 2 s after this task was cancelled. PostgresNIO's `LISTEN` on a connection
    /// the server has just terminated can wait forever; a node must not stay deaf, or hang its shutdown, for it.
    private func supervisedListen(
        _ hub: SignalingHub,
        isReconnect: Bool,
        onListening: @escaping @Sendable () -> Void
    ) async throws {
        let started = ContinuousClock.now
        let outcome = FirstOutcome<Void>()
        let session = Task {
            do {
                try await self.listen(hub, isReconnect: isReconnect, onListening: onListening)
                outcome.resolve(.success(()))
            } catch {
                outcome.resolve(.failure(error))
            }
        }
        let watchdog = Task {
            while await pause(configuration.heartbeatInterval) {
                let (listening, lastHeard, handling) = state.withLock { ($0.isListening, $0.lastHeard, $0.isHandling) }
                let now = ContinuousClock.now
                let stuckStarting = !listening && now - started > listenSetupTimeout
                let stuckDeaf = listening && !handling && now - lastHeard > echoTimeout * 2
                if stuckStarting || stuckDeaf {
                    logger.warning(
                        "bemyears.bus: a LISTEN session does not end by itself; it is left behind",
                        metadata: ["node": "\(node)", "stuck": "\(stuckStarting ? "starting" : "deaf")"]
                    )
                    outcome.resolve(.failure(ListenerWentDeaf()))
                    return
                }
            }
        }
        let result = await withTaskCancellationHandler {
            await outcome.wait()
        } onCancel: {
            session.cancel()
            Task {
                try? await Task.sleep(for: .seconds(2))
                outcome.resolve(.failure(CancellationError()))
            }
        }
        watchdog.cancel()
        session.cancel()
        try result.get()
    }

    /// One `LISTEN` session on a connection of the pool, until it fails, goes deaf or the task is cancelled.
    private func listen(_ hub: SignalingHub, isReconnect: Bool, onListening: () -> Void) async throws {
        try await store.client.withConnection { connection in
            try await connection.listen(on: configuration.channel) { notifications in
                setListening(true)
                onListening()
                if isReconnect {
                    // Whatever was published while nobody listened is lost; the presence list at least is
                    // read afresh.
                    logger.notice("bemyears.bus: listening again", metadata: ["node": "\(node)"])
                    await hub.presenceDidChange()
                }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for try await notification in notifications {
                            // Any notice heard proves the listener receives; a backlog of slow ones (each stored
                            // message is a query) must not make it look deaf while the echo waits its turn.
                            self.state.withLock {
                                $0.lastHeard = .now
                                $0.isHandling = true
                            }
                            await self.receive(notification.payload, into: hub)
                            self.state.withLock {
                                $0.lastHeard = .now
                                $0.isHandling = false
                            }
                        }
                        throw ListenerEnded()
                    }
                    group.addTask {
                        try await self.watchEchoes()
                    }
                    defer { group.cancelAll() }
                    try await group.next()
                }
            }
        }
    }

    /// Throws ``ListenerWentDeaf`` when the channel has been silent for ``echoTimeout`` while the listener waited
    /// on it: the node echoes every ``Configuration/heartbeatInterval``, so a listener that still receives hears
    /// at least that. Time spent handling a notice is not silence (a stored message's query is bounded).
    private func watchEchoes() async throws {
        while true {
            try await Task.sleep(for: configuration.heartbeatInterval)
            let (lastHeard, isHandling) = state.withLock { ($0.lastHeard, $0.isHandling) }
            if !isHandling, ContinuousClock.now - lastHeard > echoTimeout { throw ListenerWentDeaf() }
        }
    }

    /// Handles one notification: in order, completely (a stored message is fetched) before the next.
    func receive(_ payload: String, into hub: SignalingHub) async {
        guard let notice = BusNotice(decoding: payload) else {
            logger.warning(
                "bemyears.bus: an unreadable notice was ignored",
                metadata: ["bytes": "\(payload.utf8.count)"]
            )
            return
        }
        if notice.source == node.rawValue {
            return
        }
        let verdict = state.withLock {
            $0.tracker.admit(source: notice.source, epoch: notice.epoch, sequence: notice.sequence)
        }
        switch verdict {
        case .next:
            break
        case .duplicate:
            return
        case .gap(let missed):
            logger.warning(
                "bemyears.bus: notices from a node were lost",
                metadata: ["node": "\(node)", "source": "\(notice.source)", "missed": "\(missed)"]
            )
            await hub.presenceDidChange()
        }
        switch notice.kind {
        case .presence:
            await hub.presenceDidChange()
        case .echo:
            break
        case .forward:
            guard notice.target == node.rawValue, let session = notice.session, let text = notice.text else { return }
            await deliver(text, to: SessionID(session), into: hub)
        case .stored:
            guard notice.target == node.rawValue, let session = notice.session, let id = notice.payload else { return }
            guard let text = await takeStoredMessage(id) else { return }
            await deliver(text, to: SessionID(session), into: hub)
        }
    }

    private func deliver(_ text: String, to session: SessionID, into hub: SignalingHub) async {
        let envelope: Envelope
        do {
            envelope = try EnvelopeCodec.decode(text, maximumBytes: Self.maximumMessageBytes)
        } catch {
            logger.error("bemyears.bus: a forwarded message could not be decoded", metadata: ["code": "\(error.code)"])
            return
        }
        await hub.deliver(envelope, to: session)
    }

    /// Reads and deletes a stored message body (retrying briefly: the notice arrives only after the row's
    /// commit, so a miss means the row was swept or the database failed).
    private func takeStoredMessage(_ id: UUID) async -> String? {
        for attempt in 1...3 {
            do {
                let body = try await store.bounded { [store] () async throws -> String? in
                    let rows = try await store.client.query(
                        "DELETE FROM bemyears_bus_payloads WHERE id = \(id) RETURNING body",
                        logger: store.queryLogger
                    )
                    for try await body in rows.decode(String.self) {
                        return body
                    }
                    return nil
                }
                if body == nil {
                    logger.warning("bemyears.bus: a stored message was missing", metadata: ["node": "\(node)"])
                }
                return body
            } catch {
                logger.warning(
                    "bemyears.bus: reading a stored message failed",
                    metadata: ["attempt": "\(attempt)", "error": "\(loggable(error))"]
                )
                guard await pause(.milliseconds(100 * attempt)) else { return nil }
            }
        }
        return nil
    }
}
