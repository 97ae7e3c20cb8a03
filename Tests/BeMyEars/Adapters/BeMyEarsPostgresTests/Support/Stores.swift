import BeMyEarsCore
import BeMyEarsPostgres
import BeMyEarsTestSupport
import Foundation
import TestSupport
import Testing

/// The stores the contract tests run against: the core's in-memory reference and PostgreSQL.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case memory
    case postgres

    var testDescription: String { rawValue }
}

/// A fresh database on the test process's PostgreSQL server.
func freshDatabase(_ prefix: String) async throws -> LocalPostgres.Database {
    try await LocalPostgres.shared().createDatabase(prefix)
}

/// A migrated PostgreSQL store over a fresh (or the given) database, its pool running for `body`.
func withPostgresStore<T>(
    node: String = "n1",
    database: LocalPostgres.Database? = nil,
    maximumConnections: Int = 20,
    _ body: (PostgresSignalingStore) async throws -> T
) async throws -> T {
    let database = try await { () async throws -> LocalPostgres.Database in
        if let database { return database }
        return try await freshDatabase("store")
    }()
    let store = try PostgresSignalingStore(
        url: database.socketURL,
        node: NodeID(node),
        maximumConnections: maximumConnections
    )
    let pool = Task { await store.run() }
    do {
        try await withTimeout(.seconds(30), "migrating") { try await store.migrate() }
        let result = try await body(store)
        pool.cancel()
        await pool.value
        return result
    } catch {
        pool.cancel()
        await pool.value
        throw error
    }
}

/// Runs `body` with a fresh store of the given kind.
func withStore(_ kind: StoreKind, _ body: (any SignalingStore) async throws -> Void) async throws {
    switch kind {
    case .memory:
        try await body(InMemorySignalingStore())
    case .postgres:
        try await withPostgresStore { store in try await body(store) }
    }
}

/// Registrations and requests for store tests.
enum Fixture {
    static let now = ManualClock.start

    static func registration(
        _ name: String,
        _ role: Role,
        node: String = "n1",
        at date: Date = now
    ) -> Registration {
        Registration(username: Username(name)!, role: role, session: .random(), node: NodeID(node), registeredAt: date)
    }

    static func request(
        _ number: Int,
        from caller: Registration,
        to interpreter: String,
        at date: Date = now,
        timeouts: CallTimeouts = CallTimeouts()
    ) -> CallRequest {
        CallRequest(
            id: CallID(testNumber: number),
            caller: caller.party,
            interpreter: Username(interpreter)!,
            requestedAt: date,
            timeouts: timeouts
        )
    }

    /// Registers an interpreter and sets it AVAILABLE.
    static func onlineInterpreter(
        _ name: String,
        in store: any SignalingStore,
        node: String = "n1"
    ) async throws -> Registration {
        var bob = registration(name, .interpreter, node: node)
        try #require(try await store.register(bob) == .registered)
        try #require(try await store.setAvailability(.available, of: bob.session) == .changed(to: .available))
        bob.interpreterState = .available
        return bob
    }

    /// Registers a caller.
    static func caller(_ name: String, in store: any SignalingStore, node: String = "n1") async throws -> Registration {
        let carol = registration(name, .caller, node: node)
        try #require(try await store.register(carol) == .registered)
        return carol
    }

    /// A ringing call from `caller` to `interpreter`.
    static func ringingCall(
        _ number: Int,
        from caller: Registration,
        to interpreter: String,
        in store: any SignalingStore,
        at date: Date = now,
        timeouts: CallTimeouts = CallTimeouts()
    ) async throws -> CallRecord {
        let outcome = try await store.createCall(
            request(number, from: caller, to: interpreter, at: date, timeouts: timeouts)
        )
        guard case .created(let record) = outcome else {
            Issue.record("expected a created call, got \(outcome)")
            throw MissingValue(description: "no call")
        }
        return record
    }
}
