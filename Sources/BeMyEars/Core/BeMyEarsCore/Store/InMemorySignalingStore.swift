public import Foundation

/// A ``SignalingStore`` in one process's memory: for a single-node server and for tests. Every method is one
/// actor turn with no suspension inside, which makes it atomic.
public actor InMemorySignalingStore: SignalingStore {
    private var registrations: [Username: Registration] = [:]
    private var usernames: [SessionID: Username] = [:]
    private var calls: [CallID: CallRecord] = [:]
    /// The AVAILABLE interpreters, kept with every change (a caller's REGISTER asks for them: scanning every
    /// registration made registering O(connections)), and their sorted list until the set changes.
    private var available: Set<Username> = []
    private var availableSorted: [Username]? = []

    public init() {}

    /// Stores a registration and keeps the AVAILABLE set in step.
    private func save(_ registration: Registration) {
        registrations[registration.username] = registration
        noteAvailability(of: registration.username, registration.interpreterState == .available)
    }

    private func noteAvailability(of username: Username, _ isAvailable: Bool) {
        let changed = isAvailable ? available.insert(username).inserted : available.remove(username) != nil
        if changed { availableSorted = nil }
    }

    public func register(_ registration: Registration) -> RegistrationOutcome {
        guard registrations[registration.username] == nil, usernames[registration.session] == nil else {
            return .usernameTaken
        }
        save(registration)
        usernames[registration.session] = registration.username
        return .registered
    }

    public func unregister(_ session: SessionID) -> Registration? {
        guard let username = usernames.removeValue(forKey: session) else { return nil }
        noteAvailability(of: username, false)
        return registrations.removeValue(forKey: username)
    }

    public func registration(of username: Username) -> Registration? {
        registrations[username]
    }

    public func registrations(on node: NodeID) -> [Registration] {
        registrations.values.filter { $0.node == node }.sorted { $0.username < $1.username }
    }

    public func setAvailability(_ state: InterpreterState, of session: SessionID) -> AvailabilityChange {
        guard let username = usernames[session], var registration = registrations[username],
            let current = registration.interpreterState
        else { return .notAnInterpreter }
        guard !current.isInCall else { return .refused(current: current) }
        guard current != state else { return .unchanged(current) }
        registration.interpreterState = state
        save(registration)
        return .changed(to: state)
    }

    public func availableInterpreters() -> [Username] {
        if let availableSorted { return availableSorted }
        let sorted = available.sorted()
        availableSorted = sorted
        return sorted
    }

    public func createCall(_ request: CallRequest) -> CallCreation {
        guard let callerName = usernames[request.caller.session], var caller = registrations[callerName] else {
            return .callerNotRegistered
        }
        if let existing = caller.call { return .callerBusy(existing) }
        guard var interpreter = registrations[request.interpreter], interpreter.role == .interpreter,
            let state = interpreter.interpreterState
        else { return .unknownInterpreter }
        guard state == .available else { return .interpreterBusy(state, call: interpreter.call) }
        let record = CallRecord(request, interpreter: interpreter.party)
        interpreter.interpreterState = .ringing
        interpreter.call = record.id
        caller.call = record.id
        save(interpreter)
        save(caller)
        calls[record.id] = record
        return .created(record)
    }

    public func call(_ id: CallID) -> CallRecord? {
        calls[id]
    }

    public func updateCall(_ id: CallID, with event: CallEvent, at now: Date) -> CallUpdate {
        guard var record = calls[id] else {
            return CallUpdate(transition: .rejected(.unknownCall), record: nil, interpreterAvailableAgain: false)
        }
        let transition = record.apply(event, at: now)
        calls[id] = record
        var availableAgain = false
        for party in [record.caller, record.interpreter] {
            guard let username = usernames[party.session], var registration = registrations[username] else {
                continue
            }
            availableAgain = registration.apply(transition, of: record) || availableAgain
            save(registration)
        }
        return CallUpdate(transition: transition, record: record, interpreterAvailableAgain: availableAgain)
    }

    public func dueCalls(at now: Date) -> [CallID] {
        calls.values.filter { $0.dueReason(at: now) != nil }
            .sorted { $0.requestedAt < $1.requestedAt }
            .map(\.id)
    }

    public func removeCalls(endedBefore cutoff: Date) -> Int {
        let old = calls.values.filter { record in record.ending.map { $0.date < cutoff } ?? false }.map(\.id)
        for id in old { calls[id] = nil }
        return old.count
    }
}
