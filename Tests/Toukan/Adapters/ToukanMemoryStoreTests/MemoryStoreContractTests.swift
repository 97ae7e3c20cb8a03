import Foundation
import Synchronization
import TestSupport
import Testing
import ToukanMemoryStore

/// Where a store under test keeps its rows.
enum Backend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// A fresh SQLite file; more handles open it again, as other processes on the machine would.
    case sqlite
    /// A database on a real PostgreSQL 15 (TestSupport's throwaway LocalPostgres); each handle runs its own
    /// connection pool, as another server process would.
    case postgres

    var testDescription: String { rawValue }

    /// A fresh, empty store and a way to open more handles on the same storage.
    struct Fixture: Sendable {
        let store: any MemoryStore
        let another: @Sendable () async throws -> any MemoryStore
        let close: @Sendable () -> Void
    }

    func fixture() async throws -> Fixture {
        switch self {
        case .sqlite:
            let directory = try Subprocess.temporaryDirectory("memory-store")
            let path = directory.appendingPathComponent("memories.sqlite").path
            return Fixture(
                store: try SQLiteMemoryStore(path: path), another: { try SQLiteMemoryStore(path: path) },
                close: { try? FileManager.default.removeItem(at: directory) })
        case .postgres:
            let database = try await LocalPostgres.shared().createDatabase("memories")
            let pools = Mutex<[Task<Void, Never>]>([])
            let open: @Sendable () async throws -> any MemoryStore = {
                let store = try PostgresMemoryStore(url: database.tcpURL)
                pools.withLock { $0.append(Task { await store.run() }) }
                try await store.migrate()
                return store
            }
            return Fixture(
                store: try await open(), another: open,
                close: { pools.withLock { tasks in for task in tasks { task.cancel() } } })
        }
    }
}

/// What every ``MemoryStore`` does, on SQLite and on PostgreSQL alike.
@Suite("MemoryStore contract, on SQLite and PostgreSQL", .heavy(cores: 0.25, "a PostgreSQL cluster"))
struct MemoryStoreContractTests {
    static let epoch = Date(timeIntervalSince1970: 1_800_000_000)

    static func memory(_ number: Int, key: String? = nil, minutes: Double = 0) -> Memory {
        Memory(
            id: String(format: "00000000-0000-4000-8000-%012d", number), fileName: "toukan_\(number).m4a",
            path: "audio/\(number).m4a", size: Int64(1_000 * number), idempotencyKey: key,
            digest: key == nil ? nil : Array(repeating: UInt8(number), count: 32),
            createdAt: epoch.addingTimeInterval(minutes * 60))
    }

    /// `memory` as a store gives it back: dates to the millisecond (PostgreSQL keeps microseconds, SQLite a
    /// double), so both compare equal to what was stored.
    static func stored(_ memory: Memory?) -> Memory? {
        guard var memory else { return nil }
        memory.createdAt = Date(timeIntervalSince1970: (memory.createdAt.timeIntervalSince1970 * 1000).rounded() / 1000)
        memory.processedAt = memory.processedAt.map {
            Date(timeIntervalSince1970: ($0.timeIntervalSince1970 * 1000).rounded() / 1000)
        }
        return memory
    }

    @Test(
        "a memory is found by id and key; a second one with the key is not added, the first is returned",
        arguments: Backend.allCases)
    func insertAndFind(_ backend: Backend) async throws {
        let fixture = try await backend.fixture()
        defer { fixture.close() }
        let store = fixture.store
        let first = Self.memory(1, key: "key-1")
        let added = try await store.insert(first)
        #expect(added.inserted && added.memory == first)
        #expect(Self.stored(try await store.memory(id: first.id)) == first)
        #expect(Self.stored(try await store.memory(idempotencyKey: "key-1")) == first)
        #expect(try await store.memory(id: "nobody") == nil)
        #expect(try await store.memory(idempotencyKey: "key-2") == nil)

        let again = try await store.insert(Self.memory(2, key: "key-1"))
        #expect(!again.inserted)
        #expect(Self.stored(again.memory) == first, "the memory holding the key comes back")
        #expect(try await store.memories().map(\.id) == [first.id])
        // Without a key, nothing is deduplicated.
        #expect(try await store.insert(Self.memory(3)).inserted)
        #expect(try await store.insert(Self.memory(4)).inserted)
        #expect(try await store.memories().count == 3)
    }

    @Test("newest first, ties by id, at most the limit", arguments: Backend.allCases)
    func listing(_ backend: Backend) async throws {
        let fixture = try await backend.fixture()
        defer { fixture.close() }
        let store = fixture.store
        for (number, minutes) in [(1, 0.0), (2, 5.0), (3, 5.0), (4, 2.0)] {
            _ = try await store.insert(Self.memory(number, minutes: minutes))
        }
        let ids = try await store.memories().map(\.id)
        #expect(ids == [2, 3, 4, 1].map { Self.memory($0).id })
        #expect(try await store.memories(limit: 2).map(\.id) == Array(ids.prefix(2)))
    }

    @Test(
        "processing's outcome is kept and each finished run counted; an unknown id is an error",
        arguments: Backend.allCases)
    func processing(_ backend: Backend) async throws {
        let fixture = try await backend.fixture()
        defer { fixture.close() }
        let store = fixture.store
        let memory = Self.memory(7, key: "key-7")
        _ = try await store.insert(memory)
        let done = Self.epoch.addingTimeInterval(90)
        try await store.finishProcessing(
            id: memory.id, status: .ready, duration: 61.25, loudness: -23.5, transcript: "call me back",
            error: nil, now: done)
        var expected = memory
        expected.status = .ready
        expected.duration = 61.25
        expected.loudness = -23.5
        expected.transcript = "call me back"
        expected.processedAt = done
        expected.processingRuns = 1
        #expect(Self.stored(try await store.memory(id: memory.id)) == expected)
        try await store.finishProcessing(
            id: memory.id, status: .failed, duration: nil, loudness: nil, transcript: nil,
            error: "not AAC audio", now: done)
        let failed = try #require(try await store.memory(id: memory.id))
        #expect(failed.status == .failed && failed.error == "not AAC audio" && failed.duration == nil)
        #expect(failed.processingRuns == 2)
        await #expect(throws: MemoryStoreError.self) {
            try await store.finishProcessing(
                id: "nobody", status: .ready, duration: nil, loudness: nil, transcript: nil, error: nil, now: done)
        }
    }

    @Test(
        "tus uploads: deduplicated by key, offsets move by compare-and-set, completion and deletion",
        arguments: Backend.allCases)
    func tusUploads(_ backend: Backend) async throws {
        let fixture = try await backend.fixture()
        defer { fixture.close() }
        let store = fixture.store
        let upload = TusUpload(
            id: "ab12", length: 60_000_000, metadata: "filename dG91a2FuLm00YQ==", fileName: "toukan.m4a",
            idempotencyKey: "tus-key", createdAt: Self.epoch)
        let added = try await store.insert(upload)
        #expect(added.inserted && added.upload == upload)
        let twin = TusUpload(
            id: "cd34", length: 60_000_000, metadata: "", fileName: "other.m4a", idempotencyKey: "tus-key",
            createdAt: Self.epoch)
        let again = try await store.insert(twin)
        #expect(!again.inserted && again.upload.id == "ab12")
        #expect(try await store.upload(id: "cd34") == nil)

        #expect(try await store.advance(uploadId: "ab12", from: 0, to: 4_194_304))
        #expect(try await !store.advance(uploadId: "ab12", from: 0, to: 8_388_608), "a stale offset moves nothing")
        #expect(try await store.advance(uploadId: "ab12", from: 4_194_304, to: 59_000_000))
        #expect(try await store.upload(id: "ab12")?.offset == 59_000_000)
        #expect(try await !store.advance(uploadId: "nobody", from: 0, to: 1))

        try await store.complete(uploadId: "ab12", memoryId: "m-1")
        let complete = try #require(try await store.upload(id: "ab12"))
        #expect(complete.memoryId == "m-1" && complete.metadata == upload.metadata && complete.length == 60_000_000)
        try await store.delete(uploadId: "ab12")
        #expect(try await store.upload(id: "ab12") == nil)
    }

    @Test(
        "two handles (two server processes) racing 20 inserts with one key make one memory",
        arguments: Backend.allCases)
    func racingInserts(_ backend: Backend) async throws {
        let fixture = try await backend.fixture()
        defer { fixture.close() }
        let stores = [fixture.store, try await fixture.another()]
        let outcomes = try await withThrowingTaskGroup(of: (Memory, Bool).self) { group in
            for number in 1...20 {
                let store = stores[number % 2]
                group.addTask { try await store.insert(Self.memory(number, key: "raced")) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outcomes.filter(\.1).count == 1, "exactly one insert wins")
        let winner = try #require(outcomes.first(where: \.1)?.0)
        #expect(Set(outcomes.map(\.0.id)) == [winner.id], "every loser is given the winner")
        #expect(try await stores[1].memories().map(\.id) == [winner.id])
    }
}
