import BeMyEarsCore
import Foundation
import TestSupport
import Testing

@testable import BeMyEarsPostgres

/// What only the PostgreSQL store has: several processes (connection pools) racing on one database, the schema,
/// the URL.
@Suite("PostgreSQL store", .heavy(cores: 0.5, "PostgreSQL queries and races"))
struct PostgresStoreTests {
    typealias F = Fixture

    @Test("50 concurrent createCall for one interpreter from two nodes' pools: exactly one call")
    func createCallRace() async throws {
        let database = try await freshDatabase("race")
        try await withPostgresStore(node: "a", database: database) { nodeA in
            try await withPostgresStore(node: "b", database: database) { nodeB in
                let bob = try await F.onlineInterpreter("bob", in: nodeB, node: "b")
                var callers: [(Registration, PostgresSignalingStore)] = []
                for index in 0..<50 {
                    let store = index % 2 == 0 ? nodeA : nodeB
                    callers.append((try await F.caller("caller\(index)", in: store, node: store.node.rawValue), store))
                }
                let outcomes = try await withThrowingTaskGroup(of: CallCreation.self) { group in
                    for (index, (caller, store)) in callers.enumerated() {
                        group.addTask { try await store.createCall(F.request(index + 1, from: caller, to: "bob")) }
                    }
                    var outcomes: [CallCreation] = []
                    for try await outcome in group { outcomes.append(outcome) }
                    return outcomes
                }
                let created = outcomes.compactMap { outcome -> CallRecord? in
                    if case .created(let record) = outcome { return record }
                    return nil
                }
                #expect(created.count == 1)
                let winner = try #require(created.first)
                #expect(outcomes.filter { $0 == .interpreterBusy(.ringing, call: winner.id) }.count == 49)
                let ringing = try #require(try await nodeA.registration(of: bob.username))
                #expect(ringing.interpreterState == .ringing)
                #expect(ringing.call == winner.id)
                let server = try await LocalPostgres.shared()
                let pointing = try await server.psql(
                    "SELECT count(*) FROM bemyears_registrations WHERE call_id IS NOT NULL",
                    database: database.name
                )
                #expect(pointing == "2\n", "the one winning caller and bob point at the call")
                #expect(try await server.psql("SELECT count(*) FROM bemyears_calls", database: database.name) == "1\n")

                let update = try await nodeA.updateCall(
                    winner.id,
                    with: .hangUp(by: winner.caller.session, reason: .hangup),
                    at: F.now
                )
                #expect(update.interpreterAvailableAgain)
                #expect(try await nodeB.availableInterpreters() == [bob.username])
            }
        }
    }

    @Test("20 concurrent REGISTERs of one username from two pools: one registered, 19 USERNAME_TAKEN")
    func registrationRace() async throws {
        let database = try await freshDatabase("regrace")
        try await withPostgresStore(node: "a", database: database) { nodeA in
            try await withPostgresStore(node: "b", database: database) { nodeB in
                let outcomes = try await withThrowingTaskGroup(of: RegistrationOutcome.self) { group in
                    for index in 0..<20 {
                        let store = index % 2 == 0 ? nodeA : nodeB
                        group.addTask {
                            try await store.register(F.registration("sam", .caller, node: store.node.rawValue))
                        }
                    }
                    var outcomes: [RegistrationOutcome] = []
                    for try await outcome in group { outcomes.append(outcome) }
                    return outcomes
                }
                #expect(outcomes.filter { $0 == .registered }.count == 1)
                #expect(outcomes.filter { $0 == .usernameTaken }.count == 19)
            }
        }
    }

    @Test("a call ends exactly once when HANGUPs, a disconnect and two nodes' timers race")
    func endsOnceAcrossPools() async throws {
        let database = try await freshDatabase("endonce")
        try await withPostgresStore(node: "a", database: database) { nodeA in
            try await withPostgresStore(node: "b", database: database) { nodeB in
                let bob = try await F.onlineInterpreter("bob", in: nodeB, node: "b")
                let carol = try await F.caller("carol", in: nodeA, node: "a")
                let record = try await F.ringingCall(1, from: carol, to: "bob", in: nodeA)
                let late = F.now.addingTimeInterval(10)
                let events: [(PostgresSignalingStore, CallEvent)] = [
                    (nodeA, .hangUp(by: carol.session, reason: .hangup)),
                    (nodeB, .hangUp(by: bob.session, reason: .hangup)),
                    (nodeA, .leave(carol.session, reason: .disconnected)),
                    (nodeA, .expire), (nodeB, .expire), (nodeB, .expire), (nodeA, .expire),
                ]
                let updates = try await withThrowingTaskGroup(of: CallUpdate.self) { group in
                    for (store, event) in events {
                        group.addTask { try await store.updateCall(record.id, with: event, at: late) }
                    }
                    var updates: [CallUpdate] = []
                    for try await update in group { updates.append(update) }
                    return updates
                }
                let endings = updates.filter { if case .ended = $0.transition { true } else { false } }
                #expect(endings.count == 1)
                #expect(endings.first?.transition == .ended(.ringTimeout), "the passed deadline's reason wins")
                #expect(updates.filter(\.interpreterAvailableAgain).count == 1)
                #expect(try await nodeB.registration(of: bob.username)?.interpreterState == .available)
            }
        }
    }

    @Test("migrate is idempotent, also when two nodes start at once; the version is recorded")
    func migrations() async throws {
        let database = try await freshDatabase("migrate")
        try await withPostgresStore(node: "a", database: database) { nodeA in
            try await withPostgresStore(node: "b", database: database) { nodeB in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for store in [nodeA, nodeB, nodeA, nodeB] {
                        group.addTask { try await store.migrate() }
                    }
                    try await group.waitForAll()
                }
            }
        }
        let versions = try await LocalPostgres.shared().psql(
            "SELECT version FROM bemyears_migrations ORDER BY version",
            database: database.name
        )
        #expect(versions.split(separator: "\n").map(String.init) == SchemaMigrations.all.map { "\($0.version)" })
    }

    @Test("a schema migrated by a newer release is refused with a message saying what to do")
    func schemaTooNew() async throws {
        let database = try await freshDatabase("toonew")
        try await withPostgresStore(database: database) { _ in }
        try await LocalPostgres.shared().psql(
            "INSERT INTO bemyears_migrations (version, description) VALUES (999, 'from the future')",
            database: database.name
        )
        let error = await #expect(throws: PostgresStoreError.self) {
            try await withPostgresStore(database: database) { _ in }
        }
        #expect(error?.code == .schemaTooNew)
        #expect(error?.message.contains("999") == true)
    }

    @Test("the store works over TCP (127.0.0.1, random port) as over the Unix socket")
    func tcpURL() async throws {
        let database = try await freshDatabase("tcp")
        let store = try PostgresSignalingStore(url: database.tcpURL, node: NodeID("tcp"))
        let pool = Task { await store.run() }
        defer { pool.cancel() }
        try await withTimeout(.seconds(30), "migrating over TCP") { try await store.migrate() }
        #expect(try await store.register(F.registration("bob", .caller, node: "tcp")) == .registered)
        #expect(try await store.registrations(on: NodeID("tcp")).map(\.username.rawValue) == ["bob"])
        pool.cancel()
        await pool.value
    }

    @Test("an unreachable database is a thrown timeout (the hub answers INTERNAL_ERROR), not a hang or an outcome")
    func unreachableDatabase() async throws {
        // Nothing listens on port 1: the pool retries connecting for ever, the store step gives up after 10 s.
        let store = try PostgresSignalingStore(
            url: "postgres://nobody@127.0.0.1:1/none?sslmode=disable",
            node: NodeID("x")
        )
        let pool = Task { await store.run() }
        let started = ContinuousClock.now
        let error = await #expect(throws: PostgresStoreError.self) {
            try await withTimeout(.seconds(30), "a refused connection") {
                try await store.register(F.registration("bob", .caller))
            }
        }
        #expect(error?.code == .timedOut)
        #expect(ContinuousClock.now - started < .seconds(20))
        pool.cancel()
        await pool.value
    }
}

/// The store's URL and node checks, without a database (the URL syntax is tested in PostgresTests).
@Suite("Database URL")
struct DatabaseURLTests {
    @Test("an unusable URL is refused with the store's invalidURL code and a message saying what to fix")
    func refused() {
        #expect {
            _ = try PostgresSignalingStore(url: "mysql://u@h/db", node: NodeID("n"))
        } throws: { error in
            guard let error = error as? PostgresStoreError else { return false }
            return error.code == .invalidURL && error.message.contains("postgres://")
        }
    }

    @Test("a node identifier must be 1 to 100 bytes")
    func nodeIdentifier() {
        for bad in ["", String(repeating: "n", count: 101)] {
            #expect(throws: PostgresStoreError.self) {
                _ = try PostgresSignalingStore(url: "postgres://u@h/db", node: NodeID(bad))
            }
        }
    }
}
