import Foundation
import TestSupport
import Testing
import ToukanCore
import ToukanStore
import ToukanTestSupport

@Suite("ToukanStore: the ledger in SQLite")
struct ToukanDatabaseTests {
    let now = LedgerFixtures.epoch.addingTimeInterval(3600)

    /// A ledger in a fresh data directory (removed when the test's process ends with the temp directory).
    static func fileDatabase() throws -> (ToukanDatabase, URL) {
        let directory = try Subprocess.temporaryDirectory("toukan-store")
        return (try ToukanDatabase(directory: directory), directory)
    }

    @Test("every field of a recording survives the round trip, gaps and dates included")
    func roundTrip() throws {
        let (database, _) = try Self.fileDatabase()
        var recording = LedgerFixtures.pending(1)
        recording.gaps = [Gap(start: 723, length: 14), Gap(start: 900.5, length: 0.25)]
        recording.duration = 1234.5
        try database.add(recording)
        try database.beginUpload(id: recording.id, at: now.addingTimeInterval(0.125))
        try database.recordProgress(id: recording.id, offset: 4_194_304, location: "http://server/files/7")
        let failed = try database.failAttempt(
            id: recording.id, .server(status: 503, message: "busy", retryAfter: 30), at: now.addingTimeInterval(1))

        let stored = try #require(try database.recording(id: recording.id))
        #expect(stored == failed)
        #expect(stored.gaps == recording.gaps)
        #expect(stored.uploadOffset == 4_194_304 && stored.uploadLocation == "http://server/files/7")
        #expect(stored.idempotencyKey == recording.idempotencyKey)
        #expect(stored.lastAttempt == now.addingTimeInterval(0.125))
        #expect(stored.retryNotBefore == now.addingTimeInterval(31))
        #expect(stored.uploadStatus == .pending && stored.retryCount == 0 && stored.offlineAttempts == 1)
        #expect(stored.offlineSince == now.addingTimeInterval(0.125), "unreachable since that attempt began")
        #expect(stored.lastError == "server answered 503: busy")
    }

    @Test("the whole path to uploaded is persisted, memory id and purge date included")
    func uploaded() throws {
        let database = try ToukanDatabase.inMemory()
        let recording = LedgerFixtures.pending(2)
        try database.add(recording)
        try database.beginUpload(id: recording.id, at: now)
        try database.completeUpload(id: recording.id, memoryId: "5f0c…", at: now, retention: 60)
        let stored = try #require(try database.recording(id: recording.id))
        #expect(stored.uploadStatus == .uploaded && stored.memoryId == "5f0c…")
        #expect(stored.uploadedAt == now && stored.purgeAfter == now.addingTimeInterval(60))
        #expect(try database.queueRows().isEmpty)
        #expect(try database.filesToDelete(at: now.addingTimeInterval(59), policy: .init(retention: 60)).isEmpty)
        let purgeable = try database.filesToDelete(at: now.addingTimeInterval(60), policy: .init(retention: 60))
        #expect(purgeable.map(\.id) == [recording.id])
        try database.markFileDeleted(id: recording.id, at: now.addingTimeInterval(61), policy: .init(retention: 60))
        #expect(try database.recording(id: recording.id)?.fileDeletedAt == now.addingTimeInterval(61))
    }

    @Test("a refused transition throws the core's reason and changes nothing")
    func refused() throws {
        let database = try ToukanDatabase.inMemory()
        let recording = LedgerFixtures.pending(3)
        try database.add(recording)
        try database.beginUpload(id: recording.id, at: now)
        try database.completeUpload(id: recording.id, memoryId: "memory-1", at: now)
        let before = try #require(try database.recording(id: recording.id))

        #expect(throws: RecordingTransitionError.self) { try database.beginUpload(id: recording.id, at: now) }
        #expect(throws: RecordingTransitionError.self) { try database.retry(id: recording.id) }
        #expect(throws: RecordingTransitionError.self) {
            try database.completeUpload(id: recording.id, memoryId: "memory-2", at: now)
        }
        #expect(throws: RecordingTransitionError.self) {
            try database.markFileDeleted(id: recording.id, at: now.addingTimeInterval(3600))
        }
        #expect(try database.recording(id: recording.id) == before)

        // A move that fails half-way through (after changing the row in memory) is rolled back too.
        struct Halfway: Error {}
        #expect(throws: Halfway.self) {
            try database.update(id: recording.id) { row in
                row.filePath = "elsewhere.m4a"
                throw Halfway()
            }
        }
        #expect(try database.recording(id: recording.id) == before)
        #expect(throws: ToukanStoreError.self) { try database.beginUpload(id: LedgerFixtures.id(99), at: now) }
    }

    @Test("a recording, its file or its key is added once")
    func duplicates() throws {
        let database = try ToukanDatabase.inMemory()
        try database.add(LedgerFixtures.pending(4))
        #expect(throws: ToukanStoreError.self) { try database.add(LedgerFixtures.pending(4)) }
        var sameFile = LedgerFixtures.pending(5)
        sameFile.filePath = LedgerFixtures.pending(4).filePath
        #expect(throws: ToukanStoreError.self) { try database.add(sameFile) }
        #expect(try database.history().count == 1)
    }

    @Test("history is newest first, with live progress only while uploading")
    func history() throws {
        let database = try ToukanDatabase.inMemory()
        for (number, minutes) in [(1, 10.0), (2, 30.0), (3, 20.0)] {
            try database.add(LedgerFixtures.pending(UInt8(number), minutesAfterEpoch: minutes))
        }
        try database.setUploadProgress(id: LedgerFixtures.id(3), UploadProgress(sent: 1, total: 2))  // not uploading
        try database.beginUpload(id: LedgerFixtures.id(3), at: now)
        try database.setUploadProgress(id: LedgerFixtures.id(3), UploadProgress(sent: 512, total: 2048))

        let entries = try database.history()
        #expect(entries.map(\.recording.id) == [2, 3, 1].map(LedgerFixtures.id))
        #expect(entries[1].progress == UploadProgress(sent: 512, total: 2048))
        #expect(entries[0].progress == nil && entries[2].progress == nil)
        #expect(try database.history(limit: 1).map(\.recording.id) == [LedgerFixtures.id(2)])
        #expect(try database.queueRows().map(\.id) == [1, 3, 2].map(LedgerFixtures.id))

        try database.failAttempt(id: LedgerFixtures.id(3), .network("cut"), at: now)
        #expect(try database.history()[1].progress == nil, "progress goes with the attempt")
    }

    @Test("daemon start: an interrupted upload goes back to pending keeping offset, Location and key")
    func recovery() throws {
        let (database, directory) = try Self.fileDatabase()
        let recording = LedgerFixtures.pending(6)
        try database.add(recording)
        try database.add(LedgerFixtures.pending(7, minutesAfterEpoch: 1))
        try database.beginUpload(id: recording.id, at: now)
        try database.recordProgress(id: recording.id, offset: 59_000_000, location: "/files/abc")

        // The daemon is killed: a new process opens the same file.
        let restarted = try ToukanDatabase(directory: directory)
        #expect(try restarted.recoverInterruptedUploads() == [recording.id])
        let stored = try #require(try restarted.recording(id: recording.id))
        #expect(stored.uploadStatus == .pending && stored.retryCount == 0)
        #expect(stored.uploadOffset == 59_000_000 && stored.uploadLocation == "/files/abc")
        #expect(stored.idempotencyKey == recording.idempotencyKey)
        #expect(try restarted.recoverInterruptedUploads().isEmpty)
        let action = UploadQueue().nextAction(
            rows: try restarted.queueRows(), connectivity: .online(since: now), now: now)
        #expect(action == .upload(recording.id), "the resumed upload is due at once")
    }

    @Test("retry --all makes pending and failed rows due with a fresh count")
    func retryAll() throws {
        let database = try ToukanDatabase.inMemory()
        for number in 1...3 {
            try database.add(LedgerFixtures.pending(UInt8(number), minutesAfterEpoch: Double(number)))
        }
        try database.beginUpload(id: LedgerFixtures.id(1), at: now)
        try database.failAttempt(
            id: LedgerFixtures.id(1), .server(status: 415, message: "not audio", retryAfter: nil), at: now)
        try database.beginUpload(id: LedgerFixtures.id(2), at: now)
        #expect(try database.recording(id: LedgerFixtures.id(1))?.uploadStatus == .failed)

        #expect(try database.retryAll() == [LedgerFixtures.id(1), LedgerFixtures.id(3)])
        let first = try #require(try database.recording(id: LedgerFixtures.id(1)))
        #expect(first.uploadStatus == .pending && first.retryCount == 0 && first.lastError == nil)
        #expect(try database.recording(id: LedgerFixtures.id(2))?.uploadStatus == .uploading)
    }

    @Test("two store objects on one file share the writes; another process's write (sqlite3) changes dataVersion")
    func twoHandles() async throws {
        let (daemon, directory) = try Self.fileDatabase()
        let command = try ToukanDatabase(directory: directory)
        let version = try daemon.dataVersion()
        try daemon.add(LedgerFixtures.pending(8))
        #expect(try command.history().map(\.recording.id) == [LedgerFixtures.id(8)])
        try daemon.beginUpload(id: LedgerFixtures.id(8), at: now)
        try daemon.setUploadProgress(id: LedgerFixtures.id(8), UploadProgress(sent: 10, total: 100))
        #expect(try command.history().first?.progress == UploadProgress(sent: 10, total: 100))
        // The command's retry of an uploading row is refused and the daemon's row untouched.
        #expect(throws: RecordingTransitionError.self) { try command.retry(id: LedgerFixtures.id(8)) }
        try daemon.failAttempt(id: LedgerFixtures.id(8), .server(status: 415, message: nil, retryAfter: nil), at: now)
        try command.retry(id: LedgerFixtures.id(8))
        #expect(try daemon.recording(id: LedgerFixtures.id(8))?.uploadStatus == .pending)
        #expect(try daemon.dataVersion() == version, "one process, one pool: its own writes do not count")
        let file = directory.appendingPathComponent(ToukanDatabase.fileName).path
        let other = try await Subprocess.run("sqlite3", [file, "UPDATE recording SET duration = 9"])
        #expect(other.status == 0, "\(other.stderrText)")
        #expect(try daemon.dataVersion() != version, "the daemon notices another process's write")
        #expect(try daemon.recording(id: LedgerFixtures.id(8))?.duration == 9)
    }

    @Test("the ledger file is created owner-only, and an existing file is set back to 0600")
    func fileMode() throws {
        let (_, directory) = try Self.fileDatabase()
        let path = directory.appendingPathComponent(ToukanDatabase.fileName).path
        func mode() throws -> Int {
            try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
        }
        #expect(try mode() == 0o600)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        _ = try ToukanDatabase(directory: directory)
        #expect(try mode() == 0o600)
    }

    @Test("a directory that is not there is a clear error naming the file")
    func cannotOpen() {
        let missing = URL(fileURLWithPath: "/nonexistent-\(UUID())")
        #expect {
            _ = try ToukanDatabase(directory: missing)
        } throws: { error in
            (error as? ToukanStoreError)?.code == .cannotOpen && "\(error)".contains(ToukanDatabase.fileName)
        }
    }
}
