public import Foundation

/// A registered session as the shared store keeps it: one per live username.
///
/// Invariants every store keeps: usernames are unique; a caller has no ``interpreterState``; an interpreter's
/// state is RINGING or IN_CALL exactly when ``call`` is set; a caller's ``call`` is its one live call.
public struct Registration: Sendable, Hashable, Codable {
    public var username: Username
    public var role: Role
    public var session: SessionID
    /// The node whose WebSocket holds the session.
    public var node: NodeID
    public var registeredAt: Date
    /// Interpreters only (nil for callers). Starts UNAVAILABLE.
    public var interpreterState: InterpreterState?
    /// The live call this session is a party of.
    public var call: CallID?

    public init(
        username: Username,
        role: Role,
        session: SessionID,
        node: NodeID,
        registeredAt: Date,
        interpreterState: InterpreterState? = nil,
        call: CallID? = nil
    ) {
        self.username = username
        self.role = role
        self.session = session
        self.node = node
        self.registeredAt = registeredAt
        self.interpreterState = interpreterState ?? (role == .interpreter ? .unavailable : nil)
        self.call = call
    }

    /// This session as a call party.
    public var party: CallParty { CallParty(username: username, session: session, node: node) }

    /// Brings the registration in line with a call transition, as a store must in the same atomic step as the
    /// call's update (no-op unless this registration is one of `call`'s parties and still points at it):
    /// - ``CallTransition/accepted``: the interpreter RINGING → IN_CALL.
    /// - ``CallTransition/ended(_:)``: the party's ``call`` is cleared; the interpreter → AVAILABLE.
    /// - Returns: Whether this made an interpreter AVAILABLE (presence changed).
    @discardableResult
    public mutating func apply(_ transition: CallTransition, of call: CallRecord) -> Bool {
        guard self.call == call.id, session == call.caller.session || session == call.interpreter.session else {
            return false
        }
        switch transition {
        case .accepted:
            if role == .interpreter { interpreterState = .inCall }
            return false
        case .ended:
            self.call = nil
            guard role == .interpreter else { return false }
            interpreterState = .available
            return true
        case .relay, .notDue, .rejected:
            return false
        }
    }
}
