import BeMyEarsCore
import Foundation
import Synchronization

/// An in-memory store that can be taken down: while `isDown`, every call throws, as PostgreSQL does while it
/// restarts.
final class OutageStore: SignalingStore {
    struct Unreachable: Error {}

    let inner = InMemorySignalingStore()
    private let down = Mutex(false)

    var isDown: Bool {
        get { down.withLock { $0 } }
        set { down.withLock { $0 = newValue } }
    }

    private func reach() throws {
        if isDown { throw Unreachable() }
    }

    func register(_ registration: Registration) async throws -> RegistrationOutcome {
        try reach()
        return await inner.register(registration)
    }

    func unregister(_ session: SessionID) async throws -> Registration? {
        try reach()
        return await inner.unregister(session)
    }

    func registration(of username: Username) async throws -> Registration? {
        try reach()
        return await inner.registration(of: username)
    }

    func registrations(on node: NodeID) async throws -> [Registration] {
        try reach()
        return await inner.registrations(on: node)
    }

    func setAvailability(_ state: InterpreterState, of session: SessionID) async throws -> AvailabilityChange {
        try reach()
        return await inner.setAvailability(state, of: session)
    }

    func availableInterpreters() async throws -> [Username] {
        try reach()
        return await inner.availableInterpreters()
    }

    func createCall(_ request: CallRequest) async throws -> CallCreation {
        try reach()
        return await inner.createCall(request)
    }

    func call(_ id: CallID) async throws -> CallRecord? {
        try reach()
        return await inner.call(id)
    }

    func updateCall(_ id: CallID, with event: CallEvent, at now: Date) async throws -> CallUpdate {
        try reach()
        return await inner.updateCall(id, with: event, at: now)
    }

    func dueCalls(at now: Date) async throws -> [CallID] {
        try reach()
        return await inner.dueCalls(at: now)
    }

    func removeCalls(endedBefore cutoff: Date) async throws -> Int {
        try reach()
        return await inner.removeCalls(endedBefore: cutoff)
    }
}
