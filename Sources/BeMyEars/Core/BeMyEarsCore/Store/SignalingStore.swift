public import Foundation

/// The state shared by every node of a BeMyEars server: registrations, interpreter states and calls.
///
/// Each method is one atomic step (in memory: one actor call; in PostgreSQL: one transaction holding row locks
/// on the rows it reads and writes). The rules of each step are the pure functions of ``CallRecord`` and
/// ``Registration``, so implementations only supply atomicity and storage:
///
/// - ``createCall(_:)`` is the compare-and-set that makes concurrent CALL_REQUESTs for one interpreter safe:
///   exactly one sees AVAILABLE and sets RINGING; the others get ``CallCreation/interpreterBusy(_:call:)``.
/// - ``updateCall(_:with:at:)`` loads the call, runs ``CallRecord/apply(_:at:)``, applies
///   ``Registration/apply(_:of:)`` to both parties' registrations and saves — so a call ends exactly once
///   even when two nodes' timers, a HANGUP and a disconnect race, and the interpreter is AVAILABLE again in the
///   same step that ends the call.
/// - Deadlines live in the call record (``CallRecord/nextDeadline``), so any node's
///   ``dueCalls(at:)`` + ``updateCall(_:with:at:)`` with ``CallEvent/expire`` ends an overdue call, whoever
///   created it.
///
/// Methods throw only for storage failures (the hub answers INTERNAL_ERROR); protocol outcomes are return values.
public protocol SignalingStore: Sendable {
    /// Adds a registration unless its username is taken by a live session.
    func register(_ registration: Registration) async throws -> RegistrationOutcome

    /// Removes the session's registration and returns it as it was (with its live call, if any), or nil.
    /// The caller then ends that call with ``CallEvent/leave(_:reason:)``; after this step nobody can call the
    /// session's interpreter any more.
    func unregister(_ session: SessionID) async throws -> Registration?

    /// The live registration of a username.
    func registration(of username: Username) async throws -> Registration?

    /// The registrations held by one node (to clean up after a node that died).
    func registrations(on node: NodeID) async throws -> [Registration]

    /// SET_STATE: compare-and-set of an interpreter between AVAILABLE and UNAVAILABLE (never from RINGING or
    /// IN_CALL). `state` is ``InterpreterState/available`` or ``InterpreterState/unavailable``.
    func setAvailability(_ state: InterpreterState, of session: SessionID) async throws -> AvailabilityChange

    /// The usernames of AVAILABLE interpreters, sorted by byte order.
    func availableInterpreters() async throws -> [Username]

    /// CALL_REQUEST, atomically: the caller is registered with no live call; the target is a registered
    /// interpreter; it is AVAILABLE → set RINGING with the new call; store the call
    /// (``CallRecord/init(_:interpreter:)``) and set both registrations' ``Registration/call``.
    func createCall(_ request: CallRequest) async throws -> CallCreation

    /// A call, live or ended (ended calls stay until ``removeCalls(endedBefore:)``).
    func call(_ id: CallID) async throws -> CallRecord?

    /// Applies an event to a call and its parties' registrations atomically (see the type's documentation).
    func updateCall(_ id: CallID, with event: CallEvent, at now: Date) async throws -> CallUpdate

    /// The live calls whose ``CallRecord/nextDeadline`` is at or before `now`.
    func dueCalls(at now: Date) async throws -> [CallID]

    /// Forgets calls that ended before `cutoff` (REPORT_ABUSE's window has passed); returns how many.
    func removeCalls(endedBefore cutoff: Date) async throws -> Int
}

/// Result of ``SignalingStore/register(_:)``.
public enum RegistrationOutcome: Sendable, Hashable {
    case registered
    case usernameTaken
}

/// Result of ``SignalingStore/setAvailability(_:of:)``.
public enum AvailabilityChange: Sendable, Hashable {
    /// The state changed to this one (presence changed).
    case changed(to: InterpreterState)
    /// The interpreter was already in this state.
    case unchanged(InterpreterState)
    /// Refused: the interpreter is RINGING or IN_CALL.
    case refused(current: InterpreterState)
    /// The session is not a registered interpreter.
    case notAnInterpreter
}

/// Result of ``SignalingStore/createCall(_:)``.
public enum CallCreation: Sendable, Hashable {
    /// The call exists and the interpreter is RINGING.
    case created(CallRecord)
    /// The interpreter is not AVAILABLE (or lost the race): BUSY, carrying the call the interpreter is in, if any
    /// (the one that won the race).
    case interpreterBusy(InterpreterState, call: CallID?)
    /// No such username, or it is a caller: UNKNOWN_USER.
    case unknownInterpreter
    /// The caller already rings or is in this call: BAD_STATE.
    case callerBusy(CallID)
    /// The caller's session is not registered (any more).
    case callerNotRegistered
}

/// Result of ``SignalingStore/updateCall(_:with:at:)``.
public struct CallUpdate: Sendable, Hashable {
    /// What the event did.
    public var transition: CallTransition
    /// The call after the event; nil when the callId is unknown.
    public var record: CallRecord?
    /// Whether the step made the interpreter AVAILABLE again (the call ended and the interpreter is still
    /// registered with the session that was in the call).
    public var interpreterAvailableAgain: Bool

    public init(transition: CallTransition, record: CallRecord?, interpreterAvailableAgain: Bool) {
        self.transition = transition
        self.record = record
        self.interpreterAvailableAgain = interpreterAvailableAgain
    }
}
