import BeMyEarsCore
import BeMyEarsPostgres
import BeMyEarsTestSupport
import Foundation
import TestSupport
import Testing

/// Every ``SignalingStore`` method, run against the in-memory reference and PostgreSQL with the same expectations:
/// the PostgreSQL store must be indistinguishable from the store the hub's own tests use.
@Suite("SignalingStore contract (in memory and PostgreSQL)", .heavy(cores: 1.75, "PostgreSQL under concurrent load"))
struct StoreContractTests {
    typealias F = Fixture

    @Test("register: a username once; the registration reads back as stored", arguments: StoreKind.allCases)
    func register(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any SignalingStore) async throws in
            let bob = F.registration("bob", .interpreter, at: F.now.addingTimeInterval(0.25))
            #expect(try await store.register(bob) == .registered)
            #expect(try await store.registration(of: Username("bob")!) == bob)
            #expect(bob.interpreterState == .unavailable, "interpreters start UNAVAILABLE")

            #expect(try await store.register(F.registration("bob", .caller, node: "n2")) == .usernameTaken)
            var sameSession = F.registration("robert", .caller)
            sameSession.session = bob.session
            #expect(try await store.register(sameSession) == .usernameTaken, "one registration per session")
            #expect(try await store.registration(of: Username("robert")!) == nil)

            let carol = F.registration("carol", .caller)
            #expect(try await store.register(carol) == .registered)
            #expect(try await store.registration(of: Username("carol")!)?.interpreterState == nil)
            #expect(try await store.registration(of: Username("nobody")!) == nil)
        }
    }

    @Test("registrations(on:) lists one node's registrations in byte order", arguments: StoreKind.allCases)
    func registrationsOnNode(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            // Byte order: '-' (2D) < '.' (2E) < '0' (30) < '_' (5F) < 'a' (61); a locale would sort these apart.
            for name in ["a_b", "abc", "a.b", "a0b", "a-b"] {
                #expect(try await store.register(F.registration(name, .caller, node: "n1")) == .registered)
            }
            #expect(try await store.register(F.registration("zed", .interpreter, node: "n2")) == .registered)
            let names = try await store.registrations(on: NodeID("n1")).map(\.username.rawValue)
            #expect(names == ["a-b", "a.b", "a0b", "a_b", "abc"])
            #expect(try await store.registrations(on: NodeID("n2")).map(\.username.rawValue) == ["zed"])
            #expect(try await store.registrations(on: NodeID("n3")).isEmpty)
        }
    }

    @Test("unregister returns the registration as it was, once, and frees the name", arguments: StoreKind.allCases)
    func unregister(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let bob = try await F.onlineInterpreter("bob", in: store)
            let carol = try await F.caller("carol", in: store)
            let record = try await F.ringingCall(1, from: carol, to: "bob", in: store)

            let removed = try #require(try await store.unregister(bob.session))
            #expect(removed.username == bob.username)
            #expect(removed.interpreterState == .ringing)
            #expect(removed.call == record.id, "the live call comes back so the hub can end it")
            #expect(try await store.unregister(bob.session) == nil)
            #expect(try await store.registration(of: Username("bob")!) == nil)
            #expect(try await store.register(F.registration("bob", .caller)) == .registered, "the name is free")
            #expect(try await store.unregister(.random()) == nil)
        }
    }

    @Test("setAvailability: AVAILABLE ⇄ UNAVAILABLE only, never while ringing", arguments: StoreKind.allCases)
    func setAvailability(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let carol = try await F.caller("carol", in: store)
            #expect(try await store.setAvailability(.available, of: carol.session) == .notAnInterpreter)
            #expect(try await store.setAvailability(.available, of: .random()) == .notAnInterpreter)

            let bob = F.registration("bob", .interpreter)
            _ = try await store.register(bob)
            #expect(try await store.setAvailability(.unavailable, of: bob.session) == .unchanged(.unavailable))
            #expect(try await store.setAvailability(.available, of: bob.session) == .changed(to: .available))
            #expect(try await store.setAvailability(.available, of: bob.session) == .unchanged(.available))
            #expect(try await store.availableInterpreters() == [Username("bob")!])

            _ = try await F.ringingCall(1, from: carol, to: "bob", in: store)
            #expect(try await store.setAvailability(.unavailable, of: bob.session) == .refused(current: .ringing))
            #expect(try await store.registration(of: Username("bob")!)?.interpreterState == .ringing)
            #expect(try await store.availableInterpreters().isEmpty)
        }
    }

    @Test("availableInterpreters: AVAILABLE ones only, in byte order", arguments: StoreKind.allCases)
    func availableInterpreters(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            for name in ["zoe", "a_b", "a-b", "amy"] {
                _ = try await F.onlineInterpreter(name, in: store, node: name == "zoe" ? "n2" : "n1")
            }
            _ = try await store.register(F.registration("offline", .interpreter))
            _ = try await F.caller("carol", in: store)
            #expect(try await store.availableInterpreters().map(\.rawValue) == ["a-b", "a_b", "amy", "zoe"])
        }
    }

    @Test("createCall: the caller's and the interpreter's checks, then RINGING", arguments: StoreKind.allCases)
    func createCall(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let bob = try await F.onlineInterpreter("bob", in: store, node: "n2")
            let carol = try await F.caller("carol", in: store)
            let dave = try await F.caller("dave", in: store)
            let stranger = F.registration("ghost", .caller)

            #expect(try await store.createCall(F.request(1, from: stranger, to: "bob")) == .callerNotRegistered)
            #expect(try await store.createCall(F.request(1, from: carol, to: "nobody")) == .unknownInterpreter)
            #expect(try await store.createCall(F.request(1, from: carol, to: "dave")) == .unknownInterpreter)
            _ = try await store.register(F.registration("amy", .interpreter))
            #expect(
                try await store.createCall(F.request(1, from: carol, to: "amy"))
                    == .interpreterBusy(.unavailable, call: nil))

            let request = F.request(7, from: carol, to: "bob", timeouts: CallTimeouts(ring: .milliseconds(1_500)))
            let expected = CallRecord(request, interpreter: bob.party)
            #expect(try await store.createCall(request) == .created(expected))
            #expect(try await store.call(expected.id) == expected)
            let ringing = try #require(try await store.registration(of: bob.username))
            #expect(ringing.interpreterState == .ringing)
            #expect(ringing.call == expected.id)
            #expect(try await store.registration(of: carol.username)?.call == expected.id)

            #expect(try await store.createCall(F.request(8, from: carol, to: "bob")) == .callerBusy(expected.id))
            #expect(
                try await store.createCall(F.request(9, from: dave, to: "bob"))
                    == .interpreterBusy(.ringing, call: expected.id)
            )
            #expect(try await store.call(CallID(testNumber: 9)) == nil)
        }
    }

    @Test(
        "updateCall: accept, relay, hang up — one transition each, parties updated with it",
        arguments: StoreKind.allCases
    )
    func updateCallFlow(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let bob = try await F.onlineInterpreter("bob", in: store, node: "n2")
            let carol = try await F.caller("carol", in: store)
            let record = try await F.ringingCall(1, from: carol, to: "bob", in: store)
            let t1 = F.now.addingTimeInterval(1.5)

            let unknown = try await store.updateCall(CallID(testNumber: 99), with: .expire, at: t1)
            #expect(unknown.transition == .rejected(.unknownCall))
            #expect(unknown.record == nil)
            #expect(!unknown.interpreterAvailableAgain)
            #expect(
                try await store.updateCall(record.id, with: .accept(by: carol.session), at: t1).transition
                    == .rejected(.roleForbidden))
            #expect(
                try await store.updateCall(record.id, with: .accept(by: .random()), at: t1).transition
                    == .rejected(.notAParty))
            #expect(
                try await store.updateCall(record.id, with: .relay(.offer, by: carol.session), at: t1).transition
                    == .rejected(.notAccepted))
            #expect(try await store.updateCall(record.id, with: .expire, at: t1).transition == .notDue)

            let accepted = try await store.updateCall(record.id, with: .accept(by: bob.session), at: t1)
            #expect(accepted.transition == .accepted)
            #expect(accepted.record?.state == .accepted(at: t1, answerRelayed: false, videoVisible: false))
            #expect(!accepted.interpreterAvailableAgain)
            #expect(try await store.registration(of: bob.username)?.interpreterState == .inCall)
            #expect(try await store.call(record.id) == accepted.record)

            let t2 = t1.addingTimeInterval(0.5)
            let answer = try await store.updateCall(record.id, with: .relay(.answer, by: bob.session), at: t2)
            #expect(answer.transition == .relay(to: carol.party))
            let visible = try await store.updateCall(
                record.id,
                with: .relay(.videoVisible, by: carol.session, videoVisible: true),
                at: t2
            )
            #expect(visible.transition == .relay(to: bob.party))
            #expect(visible.record?.state == .accepted(at: t1, answerRelayed: true, videoVisible: true))
            #expect(visible.record?.nextDeadline == nil, "connected: no deadline left")
            #expect(try await store.call(record.id) == visible.record)
            #expect(
                try await store.updateCall(record.id, with: .accept(by: bob.session), at: t2).transition
                    == .rejected(.notRinging))

            let t3 = t2.addingTimeInterval(60)
            let ended = try await store.updateCall(record.id, with: .hangUp(by: carol.session, reason: .hangup), at: t3)
            #expect(ended.transition == .ended(.hangup))
            #expect(ended.interpreterAvailableAgain)
            #expect(ended.record?.ending?.date == t3)
            let bobAfter = try #require(try await store.registration(of: bob.username))
            #expect(bobAfter.interpreterState == .available)
            #expect(bobAfter.call == nil)
            #expect(try await store.registration(of: carol.username)?.call == nil)
            #expect(try await store.availableInterpreters() == [bob.username])

            let again = try await store.updateCall(record.id, with: .hangUp(by: bob.session, reason: .hangup), at: t3)
            #expect(again.transition == .rejected(.unknownCall), "a call ends once")
            #expect(!again.interpreterAvailableAgain)
            #expect(try await store.call(record.id)?.ending?.reason == .hangup, "kept for REPORT_ABUSE")
        }
    }

    @Test("updateCall: a decline ends the call and frees the interpreter", arguments: StoreKind.allCases)
    func decline(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let bob = try await F.onlineInterpreter("bob", in: store)
            let carol = try await F.caller("carol", in: store)
            let record = try await F.ringingCall(1, from: carol, to: "bob", in: store)
            let update = try await store.updateCall(record.id, with: .decline(by: bob.session), at: F.now)
            #expect(update.transition == .ended(.declined))
            #expect(update.interpreterAvailableAgain)
            #expect(try await store.availableInterpreters() == [bob.username])
            let next = try await store.createCall(F.request(2, from: carol, to: "bob"))
            #expect(next == .created(CallRecord(F.request(2, from: carol, to: "bob"), interpreter: bob.party)))
        }
    }

    @Test(
        "updateCall after a party left: the name's new session is untouched, nobody becomes AVAILABLE",
        arguments: StoreKind.allCases
    )
    func leaveAfterReRegistration(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let bob = try await F.onlineInterpreter("bob", in: store)
            let carol = try await F.caller("carol", in: store)
            let record = try await F.ringingCall(1, from: carol, to: "bob", in: store)
            _ = try await store.unregister(bob.session)
            let newBob = F.registration("bob", .interpreter)
            #expect(try await store.register(newBob) == .registered)

            let update = try await store.updateCall(
                record.id,
                with: .leave(bob.session, reason: .disconnected),
                at: F.now
            )
            #expect(update.transition == .ended(.disconnected))
            #expect(!update.interpreterAvailableAgain)
            #expect(try await store.registration(of: bob.username) == newBob)
            #expect(try await store.registration(of: carol.username)?.call == nil)
        }
    }

    @Test(
        "dueCalls lists calls past a stored deadline, oldest first; expire ends them once",
        arguments: StoreKind.allCases
    )
    func dueCalls(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            _ = try await F.onlineInterpreter("bob", in: store)
            _ = try await F.onlineInterpreter("amy", in: store)
            let carol = try await F.caller("carol", in: store)
            let dave = try await F.caller("dave", in: store)
            let second = try await F.ringingCall(2, from: dave, to: "amy", in: store, at: F.now.addingTimeInterval(1))
            let first = try await F.ringingCall(1, from: carol, to: "bob", in: store)

            #expect(try await store.dueCalls(at: F.now.addingTimeInterval(9.5)).isEmpty)
            #expect(try await store.dueCalls(at: F.now.addingTimeInterval(10)) == [first.id])
            #expect(try await store.dueCalls(at: F.now.addingTimeInterval(11)) == [first.id, second.id])

            let expired = try await store.updateCall(first.id, with: .expire, at: F.now.addingTimeInterval(10))
            #expect(expired.transition == .ended(.ringTimeout))
            #expect(expired.interpreterAvailableAgain)
            #expect(try await store.dueCalls(at: F.now.addingTimeInterval(11)) == [second.id])
            #expect(
                try await store.updateCall(first.id, with: .expire, at: F.now.addingTimeInterval(11)).transition
                    == .rejected(.unknownCall))
        }
    }

    @Test("an accepted call's connect deadlines are stored too", arguments: StoreKind.allCases)
    func connectDeadline(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let bob = try await F.onlineInterpreter("bob", in: store)
            let carol = try await F.caller("carol", in: store)
            let record = try await F.ringingCall(1, from: carol, to: "bob", in: store)
            _ = try await store.updateCall(record.id, with: .accept(by: bob.session), at: F.now.addingTimeInterval(2))
            #expect(try await store.dueCalls(at: F.now.addingTimeInterval(11.9)).isEmpty)
            #expect(
                try await store.dueCalls(at: F.now.addingTimeInterval(12)) == [record.id],
                "no ANSWER 10 s after accept"
            )
            let update = try await store.updateCall(record.id, with: .expire, at: F.now.addingTimeInterval(12))
            #expect(update.transition == .ended(.connectTimeout))
        }
    }

    @Test("removeCalls forgets calls that ended before the cutoff, only those", arguments: StoreKind.allCases)
    func removeCalls(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let bob = try await F.onlineInterpreter("bob", in: store)
            _ = try await F.onlineInterpreter("amy", in: store)
            let carol = try await F.caller("carol", in: store)
            let dave = try await F.caller("dave", in: store)
            let ended = try await F.ringingCall(1, from: carol, to: "bob", in: store)
            _ = try await store.updateCall(ended.id, with: .decline(by: bob.session), at: F.now.addingTimeInterval(1))
            let live = try await F.ringingCall(2, from: dave, to: "amy", in: store)

            #expect(try await store.removeCalls(endedBefore: F.now.addingTimeInterval(1)) == 0, "strictly before")
            #expect(try await store.removeCalls(endedBefore: F.now.addingTimeInterval(301)) == 1)
            #expect(try await store.call(ended.id) == nil)
            #expect(try await store.call(live.id) == live)
            #expect(try await store.removeCalls(endedBefore: F.now.addingTimeInterval(301)) == 0)
        }
    }
}
