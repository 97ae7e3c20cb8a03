import CanonicalJSON
import Foundation

/// Handling of each client message once the session gate (LocalSession.interpret) let it through.
extension SignalingHub {
    func handle(_ message: ClientMessage, from session: SessionID) async throws {
        if case .register(let username, let role) = message {
            return try await register(username, role, session: session)
        }
        guard let local = sessions[session], let username = local.username, let role = local.role else { return }
        let sender = CallParty(username: username, session: session, node: node)
        switch message {
        case .register:
            break
        case .heartbeat:
            deliverLocally(.heartbeatAck, to: session)
        case .setState(let state):
            try await setState(state, session: session)
        case .callRequest(let target):
            try await requestCall(from: sender, to: target)
        case .callAccept(let id):
            try await update(id, with: .accept(by: session), from: session, role: role)
        case .callDecline(let id):
            try await update(id, with: .decline(by: session), from: session, role: role)
        case .hangup(let id, let reason):
            do {
                try await update(id, with: .hangUp(by: session, reason: reason), from: session, role: role)
            } catch {
                // Hanging up cannot fail for the person: the store takes it when it can (the next ticks), and
                // CALL_ENDED follows then.
                log(.internalError, callId: id, session: session, role: role)
                pendingRetries.append(.hangUp(id, by: session, reason))
            }
        case .relay(let kind, let id, let payload):
            let visible = kind == .videoVisible && payload?["visible"] == .bool(true)
            try await update(
                id,
                with: .relay(kind, by: session, videoVisible: visible),
                from: session,
                role: role,
                relaying: payload
            )
        case .reportAbuse(let id, _):
            try await reportAbuse(id, from: sender, role: role)
        case .iceServers(let id):
            try await renewICEServers(id, for: session)
        }
    }

    private func register(_ username: Username, _ role: Role, session: SessionID) async throws {
        let registration = Registration(
            username: username,
            role: role,
            session: session,
            node: node,
            registeredAt: clock.now
        )
        switch try await store.register(registration) {
        case .usernameTaken:
            refuse(
                SignalingError(
                    code: .usernameTaken,
                    message: "The username \"\(username)\" is already in use; choose another one."
                ),
                callId: nil,
                to: session
            )
        case .registered:
            sessions[session]?.markRegistered(username, role)
            deliverLocally(
                .registered(
                    username: username,
                    role: role,
                    heartbeatIntervalSeconds: configuration.heartbeatInterval.wholeSeconds,
                    presenceTTLSeconds: configuration.presenceTTL.wholeSeconds,
                    iceServers: iceServers.iceServers(for: session, at: clock.now)
                ),
                to: session
            )
            log(.registered, session: session, role: role)
            if role == .caller { await refreshPresence(onlyFor: session) }
        }
    }

    private func setState(_ state: InterpreterState, session: SessionID) async throws {
        switch try await store.setAvailability(state, of: session) {
        case .changed(let new):
            deliverLocally(.state(new), to: session)
            log(.stateChanged(new), session: session, role: .interpreter)
            await presenceChanged()
        case .unchanged(let current):
            deliverLocally(.state(current), to: session)
        case .refused(let current):
            let situation = current == .ringing ? "a call is ringing for you" : "you are in a call"
            refuse(
                SignalingError(
                    code: .badState,
                    message: "You cannot go online or offline while \(situation); try again when it has ended."
                ),
                callId: nil,
                to: session
            )
        case .notAnInterpreter:
            refuse(
                SignalingError(code: .notRegistered, message: "Register as an interpreter first."),
                callId: nil,
                to: session
            )
        }
    }

    private func requestCall(from caller: CallParty, to target: Username) async throws {
        let request = CallRequest(
            id: callIDs.next(),
            caller: caller,
            interpreter: target,
            requestedAt: clock.now,
            timeouts: configuration.callTimeouts
        )
        switch try await store.createCall(request) {
        case .created(let record):
            counters.callsStarted += 1
            deliver(.state(.ringing), to: record.interpreter)
            let now = clock.now
            deliver(
                .callRequest(
                    record.id,
                    from: caller.username,
                    to: target,
                    iceServers: iceServers.perCall(for: record.interpreter.session, at: now)
                ),
                to: record.interpreter
            )
            deliverLocally(
                .callRinging(
                    record.id,
                    to: target,
                    ringSeconds: configuration.callTimeouts.ring.wholeSeconds,
                    iceServers: iceServers.perCall(for: caller.session, at: now)
                ),
                to: caller.session
            )
            log(.callRequested, callId: record.id, session: caller.session, role: .caller)
            await presenceChanged()
        case .interpreterBusy(_, let call):
            deliverLocally(.busy(to: target, call: call), to: caller.session)
            log(.callBusy, session: caller.session, role: .caller)
        case .unknownInterpreter:
            refuse(
                SignalingError(
                    code: .unknownUser,
                    message: "There is no interpreter named \"\(target)\" online; pick one from the list."
                ),
                callId: nil,
                to: caller.session
            )
        case .callerBusy(let existing):
            refuse(
                SignalingError(
                    code: .badState,
                    message: "You already have a call (\(existing)); hang up before placing another one."
                ),
                callId: nil,
                to: caller.session
            )
        case .callerNotRegistered:
            refuse(
                SignalingError(code: .notRegistered, message: "Register first: send REGISTER with your username."),
                callId: nil,
                to: caller.session
            )
        }
    }

    private func update(
        _ id: CallID,
        with event: CallEvent,
        from session: SessionID,
        role: Role,
        relaying payload: JSONValue? = nil
    ) async throws {
        let update = try await store.updateCall(id, with: event, at: clock.now)
        if case .rejected(let rejection) = update.transition {
            refuse(Self.error(for: rejection, event: event), callId: id.rawValue, to: session)
            return
        }
        if case .relay(let peer) = update.transition, case .relay(let kind, _, _) = event,
            let sender = sessions[session]?.username
        {
            deliver(.relayed(kind, callId: id, from: sender, to: peer.username, payload: payload), to: peer)
            return
        }
        await perform(update, from: session)
    }

    private func reportAbuse(_ id: CallID, from reporter: CallParty, role: Role) async throws {
        let decision: CallRecord.AbuseReportDecision
        if let record = try await store.call(id) {
            decision = record.abuseReport(
                from: reporter.username,
                at: clock.now,
                window: configuration.abuseReportWindow
            )
        } else {
            decision = .rejected(.unknownCall)
        }
        switch decision {
        case .accepted(let offender):
            counters.abuseReports += 1
            deliverLocally(.reportReceived(id), to: reporter.session)
            log(.abuseReported, callId: id, session: reporter.session, role: role, offender: offender.username)
        case .rejected(let rejection):
            let error =
                rejection == .unknownCall
                ? SignalingError(
                    code: .unknownCall,
                    message: "There is no call with this callId that can still be reported; reports are accepted "
                        + "during a call and up to 5 minutes after it ended."
                )
                : SignalingError(code: .notAParty, message: "You can only report a call you took part in.")
            refuse(error, callId: id.rawValue, to: reporter.session)
        }
    }

    /// ICE_SERVERS: fresh servers (new TURN credentials) for a party of a live call, e.g. before an ICE restart of
    /// a call that outlasts its first credentials.
    private func renewICEServers(_ id: CallID, for session: SessionID) async throws {
        guard let record = try await store.call(id), record.isLive else {
            refuse(
                SignalingError(
                    code: .unknownCall,
                    message: "There is no live call with this callId; ICE servers are renewed for a call in progress."
                ),
                callId: id.rawValue,
                to: session
            )
            return
        }
        guard record.peer(of: session) != nil else {
            refuse(
                SignalingError(code: .notAParty, message: "You can only renew the ICE servers of your own call."),
                callId: id.rawValue,
                to: session
            )
            return
        }
        deliverLocally(.iceServers(id, iceServers.iceServers(for: session, at: clock.now)), to: session)
    }

    /// The ERROR for a refused call event, with a message that says what to do.
    static func error(for rejection: CallRejection, event: CallEvent) -> SignalingError {
        let message: String
        switch rejection {
        case .unknownCall:
            message = "There is no live call with this callId; it may have ended. Use the callId the server sent."
        case .notAParty:
            message = "You are not a party of this call; only its caller and interpreter can send messages for it."
        case .roleForbidden:
            message = "Only the interpreter who is being called can accept or decline a call."
        case .notRinging:
            message = "This call is no longer ringing (it was already accepted); use HANGUP to end it."
        case .notAccepted:
            let name = if case .relay(let kind, _, _) = event { kind.messageType.rawValue } else { "This message" }
            message = "\(name) can only be sent after the interpreter accepted the call (CALL_ACCEPT)."
        }
        return SignalingError(code: rejection.errorCode, message: message)
    }
}
