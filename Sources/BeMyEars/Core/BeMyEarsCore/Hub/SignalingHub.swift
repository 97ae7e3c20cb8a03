import Foundation

/// The signaling logic of one server node: takes what happens on its WebSockets and timers, consults and
/// updates the shared ``SignalingStore``, and answers through a ``SignalingOutbound``. No I/O of its own.
///
/// Inputs, all from the server around it:
/// - ``connect(_:)`` / ``receive(_:from:)`` / ``disconnect(_:)`` for each WebSocket session;
/// - ``tick()`` every few hundred milliseconds: heartbeat expiry, call deadlines, statistics;
/// - ``wake()`` when it asked for it (``SignalingOutbound/wake(at:)``): PRESENCE held back by coalescing;
/// - with a store shared by several nodes: ``deliver(_:to:)`` for messages other nodes forwarded,
///   ``presenceDidChange()`` when another node published a presence change, ``evictNode(_:)`` for a node that
///   died.
///
/// Each session's frames are handled strictly in arrival order, one at a time (a frame that arrives while an
/// earlier one waits for the store is queued), so OFFER is always forwarded before the ICE sent after it, and a
/// disconnect is handled after the frames that preceded it. Different sessions proceed concurrently; the
/// store's atomic steps decide races between them.
public actor SignalingHub {
    /// This node.
    public nonisolated let node: NodeID
    let store: any SignalingStore
    let outbound: any SignalingOutbound
    let clock: any SignalingClock
    let callIDs: CallIDGenerator
    let configuration: SignalingConfiguration
    let iceServers: ICEServerProvider

    var sessions: [SessionID: LocalSession] = [:]
    var isRefreshingPresence = false
    var presenceRefreshPending = false
    /// Callers that registered during a presence refresh, each to be sent its first PRESENCE by the next run.
    var presenceNewcomers: [SessionID] = []
    /// The wake-up asked of the outbound for PRESENCE held back by coalescing.
    var presenceWakeAt: Date?
    /// What the store could not take when it happened (it was unreachable, e.g. PostgreSQL restarting): sessions
    /// that left and HANGUPs, retried in order by every ``tick()`` until it does, so names are freed and calls end
    /// — none stays stuck.
    var pendingRetries: [StoreRetry] = []

    /// Work the store still has to take.
    enum StoreRetry {
        /// A session left: unregister it, then end its call.
        case unregister(SessionID, CallEndReason)
        /// Unregistered already; end its call and update presence.
        case leave(Registration, CallEndReason)
        /// A party hung up (HANGUP, or WEBRTC_FAILED).
        case hangUp(CallID, by: SessionID, CallEndReason)
    }
    var isTicking = false
    /// No session can expire before this (see ``tick()``).
    var nextExpiryScanAt = Date.distantPast
    var nextPruneAt: Date
    var nextStatisticsAt: Date
    var counters = SignalingStatistics()

    /// - Parameters:
    ///   - node: This node's identity in the shared store; ``NodeID/local`` for a single-node server.
    ///   - store: The shared state.
    ///   - outbound: Where messages, closes, forwards and log records go.
    ///   - clock: The time.
    ///   - callIDs: The callId generator (random UUID v4 unless a test injects a sequence).
    ///   - configuration: The protocol's numbers and the ICE servers.
    ///   - iceServers: The `iceServers` of each REGISTERED; nil: ``SignalingConfiguration/iceServers`` for all.
    public init(
        node: NodeID = .local,
        store: any SignalingStore,
        outbound: any SignalingOutbound,
        clock: any SignalingClock,
        callIDs: CallIDGenerator = .random,
        configuration: SignalingConfiguration = .standard,
        iceServers: ICEServerProvider? = nil
    ) {
        self.node = node
        self.store = store
        self.outbound = outbound
        self.clock = clock
        self.callIDs = callIDs
        self.configuration = configuration
        self.iceServers = iceServers ?? .fixed(configuration.iceServers)
        let now = clock.now
        self.nextPruneAt = now.adding(configuration.pruneInterval)
        self.nextStatisticsAt = now.adding(configuration.statisticsInterval)
    }

    // MARK: - Inputs

    /// A WebSocket session opened on this node. Nothing is sent until the client registers.
    public func connect(_ session: SessionID) {
        guard sessions[session] == nil else { return }
        sessions[session] = LocalSession(id: session, now: clock.now, rateLimit: configuration.rateLimit)
        log(.sessionOpened, session: session)
    }

    /// A text frame arrived on a session.
    ///
    /// Returns when the frame (and any frames queued before it) has been handled — unless another task is
    /// already handling this session's queue, in which case the frame is queued and handled by that task.
    public func receive(_ text: String, from session: SessionID) async {
        guard var local = sessions[session], !local.isClosing else { return }
        let admission = local.admit(
            text,
            at: clock.now,
            maximumBytes: configuration.maximumMessageBytes,
            maximumQueued: configuration.maximumQueuedMessages
        )
        sessions[session] = local
        switch admission {
        case .queued:
            break
        case .rateLimited(let firstInRun):
            outbound.send(
                .error(
                    SignalingError(
                        code: .rateLimited,
                        message: "Too many messages: at most \(configuration.rateLimit.summary). This one was dropped; "
                            + "slow down and send it again."
                    )
                ),
                to: session
            )
            if firstInRun { log(.rateLimited, session: session, role: local.role) }
        case .tooLarge(let error):
            _ = sessions[session]?.beginTermination(
                LocalSession.Termination(reason: .disconnected, notice: error, close: .messageTooBig)
            )
        }
        await drain(session)
    }

    /// The session's WebSocket closed (or failed). Its call ends with DISCONNECTED, after the frames it sent
    /// before closing have been handled.
    public func disconnect(_ session: SessionID) async {
        guard sessions[session]?.beginTermination(.disconnected) == true else { return }
        await drain(session)
    }

    /// A message another node forwarded for a session of this node (``SignalingOutbound/forward(_:to:on:)``).
    /// Call it for each forwarded message in the order the channel delivers them.
    public func deliver(_ envelope: Envelope, to session: SessionID) async {
        deliverLocally(envelope, to: session)
        await refreshDeferredPresence(of: session)
    }

    /// Another node changed the set of AVAILABLE interpreters: refresh this node's callers.
    public func presenceDidChange() async {
        await refreshPresence()
    }

    /// Another node died: forget its sessions and end their calls with DISCONNECTED, as if each had
    /// disconnected. Whoever decides that a node is dead (e.g. a lease in the shared database) calls this on one
    /// surviving node.
    public func evictNode(_ deadNode: NodeID) async {
        guard deadNode != node else { return }
        do {
            for registration in try await store.registrations(on: deadNode) {
                guard let removed = try await store.unregister(registration.session) else { continue }
                try await sessionLeft(removed, reason: .disconnected)
            }
        } catch {
            log(.internalError)
        }
    }

    /// Counts for this node right now (the periodic log record carries the same).
    public func statistics() -> SignalingStatistics {
        var statistics = counters
        statistics.sessions = sessions.count
        statistics.callers = sessions.values.count { $0.role == .caller }
        statistics.interpreters = sessions.values.count { $0.role == .interpreter }
        statistics.partiesInCalls = sessions.values.count { $0.knownCall != nil }
        return statistics
    }

    // MARK: - Session plumbing

    /// Handles the session's queued work, one item at a time, unless another task already does.
    func drain(_ session: SessionID) async {
        guard let local = sessions[session], !local.isDraining else { return }
        sessions[session]?.isDraining = true
        while let item = sessions[session]?.nextWorkItem() {
            switch item {
            case .message(let text): await process(text, from: session)
            case .terminate(let termination): await terminate(session, termination)
            }
        }
        sessions[session]?.isDraining = false
    }

    private func process(_ text: String, from session: SessionID) async {
        guard let local = sessions[session] else { return }
        switch local.interpret(text, maximumBytes: configuration.maximumMessageBytes) {
        case .handle(let message, let callId):
            do {
                try await handle(message, from: session)
            } catch {
                refuse(
                    SignalingError(
                        code: .internalError,
                        message: "The server could not complete this request; please try again."
                    ),
                    callId: callId,
                    to: session
                )
                log(.internalError, session: session, role: local.role)
            }
        case .reject(let error, let callId):
            refuse(error, callId: callId, to: session)
        case .close(let error, let code):
            await terminate(session, LocalSession.Termination(reason: .disconnected, notice: error, close: code))
        }
    }

    /// Ends a session: ERROR and close if asked, then unregister it and end its call.
    private func terminate(_ session: SessionID, _ termination: LocalSession.Termination) async {
        guard let local = sessions[session] else { return }
        _ = sessions[session]?.beginTermination(termination)
        if let notice = termination.notice {
            outbound.send(.error(notice), to: session)
            log(.messageRefused(notice.code), session: session, role: local.role)
        }
        if let code = termination.close {
            outbound.close(session, code: code)
            log(.sessionClosed(code), session: session, role: local.role)
        }
        if local.role != nil {
            await retrying(.unregister(session, termination.reason))
        }
        sessions[session] = nil
        log(.sessionEnded(termination.reason), session: session, role: local.role)
    }

    /// Takes `work` to the store; if the store cannot take it now, it is kept for the next ``tick()``.
    /// - Returns: Whether the store took it.
    @discardableResult
    func retrying(_ work: StoreRetry) async -> Bool {
        var removed: Registration?
        do {
            switch work {
            case .unregister(let session, let reason):
                removed = try await store.unregister(session)
                if let removed { try await sessionLeft(removed, reason: reason) }
            case .leave(let registration, let reason):
                removed = registration
                try await sessionLeft(registration, reason: reason)
            case .hangUp(let id, let session, let reason):
                let update = try await store.updateCall(id, with: .hangUp(by: session, reason: reason), at: clock.now)
                if case .rejected = update.transition { return true }  // Ended meanwhile: nothing left to do.
                await perform(update, from: session)
            }
            return true
        } catch {
            log(.internalError)
            if case .unregister(_, let reason) = work, let removed {
                pendingRetries.append(.leave(removed, reason))  // Unregistered: what is left is its call.
            } else {
                pendingRetries.append(work)
            }
            return false
        }
    }

    /// After a registration was removed: end its call and update presence.
    private func sessionLeft(_ removed: Registration, reason: CallEndReason) async throws {
        if let callId = removed.call {
            let update = try await store.updateCall(
                callId,
                with: .leave(removed.session, reason: reason),
                at: clock.now
            )
            await perform(update, from: removed.session)
        }
        if removed.interpreterState == .available {
            await presenceChanged()
        }
    }

    // MARK: - Output helpers

    /// Sends to a session of this node, keeping track of the call the client knows about.
    func deliverLocally(_ envelope: Envelope, to session: SessionID) {
        guard var local = sessions[session], !local.isClosing else { return }
        guard local.track(envelope) else { return }
        sessions[session] = local
        outbound.send(envelope, to: session)
    }

    /// Sends to a call party, on this node or through the node that holds it.
    func deliver(_ envelope: Envelope, to party: CallParty) {
        if party.node == node {
            deliverLocally(envelope, to: party.session)
        } else {
            outbound.forward(envelope, to: party.session, on: party.node)
        }
    }

    /// Answers ERROR (never forwarded) and logs it.
    func refuse(_ error: SignalingError, callId: String?, to session: SessionID) {
        deliverLocally(.error(error, callId: callId), to: session)
        log(
            .messageRefused(error.code),
            callId: callId.flatMap(CallID.init),
            session: session,
            role: sessions[session]?.role
        )
    }

    func log(
        _ event: SignalingLogEvent,
        callId: CallID? = nil,
        session: SessionID? = nil,
        role: Role? = nil,
        offender: Username? = nil
    ) {
        outbound.log(
            SignalingLogRecord(
                timestamp: clock.now,
                event: event,
                callId: callId,
                sessionId: session,
                role: role,
                offender: offender
            )
        )
    }
}
