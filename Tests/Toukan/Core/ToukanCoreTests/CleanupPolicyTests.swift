import Foundation
import Testing
import ToukanCore
import ToukanTestSupport

@Suite("Cleanup: a file goes 7 days after a confirmed upload, never before, never if not uploaded")
struct CleanupPolicyTests {
    static let uploadedAt = LedgerFixtures.epoch + 600
    static let week: TimeInterval = 7 * 86_400
    let policy = CleanupPolicy()

    func uploaded(_ number: UInt8) throws -> Recording {
        var row = LedgerFixtures.pending(number, minutesAfterEpoch: Double(number))
        try row.beginUpload(at: Self.uploadedAt)
        try row.completeUpload(memoryId: "m-\(number)", at: Self.uploadedAt)
        return row
    }

    @Test("an uploaded file is kept for seven days, deletable from then on")
    func sevenDays() throws {
        let row = try uploaded(1)
        #expect(!policy.mayDelete(row, at: Self.uploadedAt + Self.week - 1))
        #expect(policy.mayDelete(row, at: Self.uploadedAt + Self.week))
        #expect(policy.filesToDelete([row], at: Self.uploadedAt + Self.week).map(\.id) == [row.id])
    }

    @Test("pending, uploading and failed files are never deleted, however old")
    func neverUnuploaded() throws {
        let far = Self.uploadedAt + 100 * Self.week
        var uploading = LedgerFixtures.pending(2)
        try uploading.beginUpload(at: Self.uploadedAt)
        var failed = LedgerFixtures.pending(3)
        try failed.beginUpload(at: Self.uploadedAt)
        try failed.failAttempt(.server(status: 415, message: nil, retryAfter: nil), at: Self.uploadedAt)
        let rows = [LedgerFixtures.pending(1), uploading, failed]
        #expect(policy.filesToDelete(rows, at: far).isEmpty)
        var row = failed
        let error = try #require(throws: RecordingTransitionError.self) { try row.markFileDeleted(at: far) }
        #expect(error.code == .notPurgeable)
    }

    @Test("a deleted file is listed no more; deleting early is refused")
    func markDeleted() throws {
        var row = try uploaded(1)
        #expect(throws: RecordingTransitionError.self) { try row.markFileDeleted(at: Self.uploadedAt + 60) }
        try row.markFileDeleted(at: Self.uploadedAt + Self.week)
        #expect(row.fileDeletedAt == Self.uploadedAt + Self.week)
        #expect(policy.filesToDelete([row], at: Self.uploadedAt + 2 * Self.week).isEmpty)
    }

    @Test("a store row claiming uploaded without a memory id or confirmation time is not deleted")
    func inconsistentRow() {
        let base = LedgerFixtures.pending(4)
        let row = Recording(
            restoring: base.id, filePath: base.filePath, recordedAt: base.recordedAt, duration: 1, gaps: [],
            idempotencyKey: base.idempotencyKey, uploadStatus: .uploaded, memoryId: nil, retryCount: 0,
            lastAttempt: nil, uploadOffset: 0, uploadLocation: nil, retryNotBefore: nil, lastError: nil,
            uploadedAt: Self.uploadedAt, purgeAfter: nil, fileDeletedAt: nil)
        #expect(!policy.mayDelete(row, at: Self.uploadedAt + 10 * Self.week))
    }

    @Test("of several, only the due ones, oldest first")
    func several() throws {
        let a = try uploaded(1)
        let b = try uploaded(2)
        var later = LedgerFixtures.pending(3)
        try later.beginUpload(at: Self.uploadedAt + Self.week)
        try later.completeUpload(memoryId: "m-3", at: Self.uploadedAt + Self.week)
        let due = policy.filesToDelete([b, later, a], at: Self.uploadedAt + Self.week + 1)
        #expect(due.map(\.id) == [a.id, b.id])
    }
}
