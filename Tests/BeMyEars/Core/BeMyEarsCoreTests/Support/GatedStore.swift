import BeMyEarsCore
import Foundation

/// An in-memory store whose next `updateCall` after `gate.arm(_:)` waits until the test opens the gate: it holds one
/// message of a session "in the store" while the test does more, to observe what the hub does meanwhile.
final class GatedStore: SignalingStore {
    actor Gate {
        enum Position {
            /// Hold the update before it is applied.
            case before
            /// Apply the update, then hold before returning it to the hub.
            case after
        }

        private var armed: Position?
        private var waiter: CheckedContinuation<Void, Never>?

        /// The next `updateCall` holds at `position` until `open()`.
        func arm(_ position: Position = .before) {
            armed = position
        }

        func pass(_ position: Position) async {
            guard armed == position else { return }
            armed = nil
            await withCheckedContinuation { waiter = $0 }
        }

        var hasWaiter: Bool { waiter != nil }

        func open() {
            waiter?.resume()
            waiter = nil
        }
    }

    let inner = InMemorySignalingStore()
    let gate = Gate()
    /// Suspensions before each call reaches the inner store, like a round trip to a database: lets concurrent
    /// hub tasks interleave.
    let latency: Int

    init(latency: Int = 0) {
        self.latency = latency
    }

    private func travel() async {
        for _ in 0..<latency { await Task.yield() }
    }

    /// Returns once a call is held at the gate.
    func waitUntilHeld() async {
        while await !gate.hasWaiter { await Task.yield() }
    }

    func register(_ registration: Registration) async throws -> RegistrationOutcome {
        await travel()
        return await inner.register(registration)
    }

    func unregister(_ session: SessionID) async throws -> Registration? {
        await travel()
        return await inner.unregister(session)
    }

    func registration(of username: Username) async throws -> Registration? {
        await travel()
        return await inner.registration(of: username)
    }

    func registrations(on node: NodeID) async throws -> [Registration] {
        await travel()
        return await inner.registrations(on: node)
    }

    func setAvailability(_ state: InterpreterState, of session: SessionID) async throws -> AvailabilityChange {
        await travel()
        return await inner.setAvailability(state, of: session)
    }

    func availableInterpreters() async throws -> [Username] {
        await travel()
        return await inner.availableInterpreters()
    }

    func createCall(_ request: CallRequest) async throws -> CallCreation {
        await travel()
        return await inner.createCall(request)
    }

    func call(_ id: CallID) async throws -> CallRecord? {
        await travel()
        return await inner.call(id)
    }

    func updateCall(_ id: CallID, with event: CallEvent, at now: Date) async throws -> CallUpdate {
        await travel()
        await gate.pass(.before)
        let update = await inner.updateCall(id, with: event, at: now)
        await gate.pass(.after)
        return update
    }

    func dueCalls(at now: Date) async throws -> [CallID] {
        await travel()
        return await inner.dueCalls(at: now)
    }

    func removeCalls(endedBefore cutoff: Date) async throws -> Int {
        await travel()
        return await inner.removeCalls(endedBefore: cutoff)
    }
}
