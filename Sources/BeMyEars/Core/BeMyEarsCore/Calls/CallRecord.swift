public import Foundation

/// One call and its state machine: the shared, authoritative record a ``SignalingStore`` keeps.
///
/// Everything that decides what a message does to a call lives here as pure functions of the record and the
/// time, so that every store (in memory, or PostgreSQL under a row lock) behaves the same: the store only loads
/// the record, calls ``apply(_:at:)`` and saves it atomically. The deadlines are derived from fields stored with
/// the call (``requestedAt``, ``timeouts``, the accept time), so any node's timer can expire any call.
///
/// ```
/// ringing ──accept──▶ accepted ──answer relayed, video visible──▶ (no deadline left)
///    │                   │
///    └─decline/hangup/leave/deadline──▶ ended ◀──hangup/leave/deadline─┘
/// ```
public struct CallRecord: Sendable, Hashable, Codable {
    /// Where the call is.
    public enum State: Sendable, Hashable, Codable {
        /// Waiting for the interpreter (interpreter RINGING).
        case ringing
        /// Accepted (interpreter IN_CALL); the flags say which connect deadlines are already met.
        case accepted(at: Date, answerRelayed: Bool, videoVisible: Bool)
        /// Over. Kept for REPORT_ABUSE's window, then removed.
        case ended(at: Date, reason: CallEndReason)
    }

    /// A point in time at which the call ends unless something happens first.
    public struct Deadline: Sendable, Hashable, Codable {
        public var date: Date
        public var reason: CallEndReason

        public init(date: Date, reason: CallEndReason) {
            self.date = date
            self.reason = reason
        }
    }

    /// The result of a REPORT_ABUSE check.
    public enum AbuseReportDecision: Sendable, Hashable {
        /// Accept the report about this party.
        case accepted(offender: CallParty)
        case rejected(CallRejection)
    }

    public let id: CallID
    public let caller: CallParty
    public let interpreter: CallParty
    public let requestedAt: Date
    public let timeouts: CallTimeouts
    public private(set) var state: State

    /// A new, ringing call.
    public init(_ request: CallRequest, interpreter: CallParty) {
        self.init(
            id: request.id,
            caller: request.caller,
            interpreter: interpreter,
            requestedAt: request.requestedAt,
            timeouts: request.timeouts,
            state: .ringing
        )
    }

    /// A call in any state, e.g. as a store loads it back.
    public init(
        id: CallID,
        caller: CallParty,
        interpreter: CallParty,
        requestedAt: Date,
        timeouts: CallTimeouts,
        state: State
    ) {
        self.id = id
        self.caller = caller
        self.interpreter = interpreter
        self.requestedAt = requestedAt
        self.timeouts = timeouts
        self.state = state
    }

    /// Whether the call has not ended.
    public var isLive: Bool {
        if case .ended = state { return false }
        return true
    }

    /// When and why the call ended, if it has.
    public var ending: (date: Date, reason: CallEndReason)? {
        guard case .ended(let date, let reason) = state else { return nil }
        return (date, reason)
    }

    /// The earliest deadline still in force; nil once the call has ended or connected. Stores index this so that
    /// ``SignalingStore/dueCalls(at:)`` is cheap.
    ///
    /// While ringing: the ring deadline (RING_TIMEOUT), or the overall connect deadline if configured earlier.
    /// Once accepted: 10 s for an ANSWER and 20 s from the request for VIDEO_VISIBLE, both CONNECT_TIMEOUT.
    public var nextDeadline: Deadline? {
        let connect = requestedAt.adding(timeouts.connect)
        var candidates: [Deadline] = []
        switch state {
        case .ringing:
            candidates.append(Deadline(date: requestedAt.adding(timeouts.ring), reason: .ringTimeout))
            candidates.append(Deadline(date: connect, reason: .connectTimeout))
        case .accepted(let acceptedAt, let answerRelayed, let videoVisible):
            if !answerRelayed {
                candidates.append(Deadline(date: acceptedAt.adding(timeouts.answer), reason: .connectTimeout))
            }
            if !videoVisible {
                candidates.append(Deadline(date: connect, reason: .connectTimeout))
            }
        case .ended:
            break
        }
        // The first of equal dates wins, so a ring deadline beats an equal connect deadline.
        return candidates.reduce(nil) { earliest, next in
            guard let earliest else { return next }
            return next.date < earliest.date ? next : earliest
        }
    }

    /// The reason the call must end at `now`, if a deadline has passed.
    public func dueReason(at now: Date) -> CallEndReason? {
        guard let deadline = nextDeadline, deadline.date <= now else { return nil }
        return deadline.reason
    }

    /// The other party of `session`, or nil when `session` is not a party.
    public func peer(of session: SessionID) -> CallParty? {
        if session == caller.session { return interpreter }
        if session == interpreter.session { return caller }
        return nil
    }

    /// Applies an event at time `now`: the call's whole authorization and state logic (seed §7, §9.2).
    ///
    /// Checks, in order: the call is live (else UNKNOWN_CALL); the sender is a party (else NOT_A_PARTY) and on
    /// the right side; a passed deadline ends the call first, with the deadline's reason; then the event's own
    /// rule. A refused event leaves the record unchanged.
    public mutating func apply(_ event: CallEvent, at now: Date) -> CallTransition {
        guard isLive else { return .rejected(.unknownCall) }
        switch event {
        case .expire:
            guard let reason = dueReason(at: now) else { return .notDue }
            return end(reason, at: now)

        case .accept(let session), .decline(let session):
            guard let peer = peer(of: session) else { return .rejected(.notAParty) }
            guard peer == caller else { return .rejected(.roleForbidden) }
            if let reason = dueReason(at: now) { return end(reason, at: now) }
            guard case .ringing = state else { return .rejected(.notRinging) }
            if case .decline = event { return end(.declined, at: now) }
            state = .accepted(at: now, answerRelayed: false, videoVisible: false)
            return .accepted

        case .hangUp(let session, let reason), .leave(let session, let reason):
            guard peer(of: session) != nil else { return .rejected(.notAParty) }
            return end(dueReason(at: now) ?? reason, at: now)

        case .relay(let kind, let session, let visible):
            guard let peer = peer(of: session) else { return .rejected(.notAParty) }
            if let reason = dueReason(at: now) { return end(reason, at: now) }
            guard case .accepted(let acceptedAt, let answerRelayed, let videoVisible) = state else {
                return .rejected(.notAccepted)
            }
            state = .accepted(
                at: acceptedAt,
                answerRelayed: answerRelayed || kind == .answer,
                videoVisible: videoVisible || (kind == .videoVisible && visible)
            )
            return .relay(to: peer)
        }
    }

    /// Whether `reporter` may report this call (protocol: a party, during the call or within `window` after it
    /// ended). Parties are matched by username, not session, so a client that reconnected can still report the
    /// call it remembers (seed §18.3: `lastCallId`, `lastRemoteUser`).
    public func abuseReport(from reporter: Username, at now: Date, window: Duration) -> AbuseReportDecision {
        if let ending, now > ending.date.adding(window) { return .rejected(.unknownCall) }
        if reporter == caller.username { return .accepted(offender: interpreter) }
        if reporter == interpreter.username { return .accepted(offender: caller) }
        return .rejected(.notAParty)
    }

    private mutating func end(_ reason: CallEndReason, at now: Date) -> CallTransition {
        state = .ended(at: now, reason: reason)
        return .ended(reason)
    }
}
