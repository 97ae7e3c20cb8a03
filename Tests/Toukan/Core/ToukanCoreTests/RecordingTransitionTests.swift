import Foundation
import Testing
import ToukanCore
import ToukanTestSupport

@Suite("Ledger status machine: pending → uploading → uploaded | failed, never uploaded twice")
struct RecordingTransitionTests {
    static let now = LedgerFixtures.epoch

    func uploading() throws -> Recording {
        var row = LedgerFixtures.pending(1)
        try row.beginUpload(at: Self.now)
        return row
    }

    @Test("a confirmed upload stores the memory id and the purge date, and is final")
    func completes() throws {
        var row = try uploading()
        try row.recordProgress(offset: 1_000, location: "/files/abc")
        try row.completeUpload(memoryId: "m-1", at: Self.now + 10)
        #expect(row.uploadStatus == .uploaded && row.memoryId == "m-1" && row.uploadedAt == Self.now + 10)
        #expect(row.purgeAfter == Self.now + 10 + 7 * 86_400)
        #expect(row.uploadOffset == 1_000 && row.uploadLocation == "/files/abc")

        var again = row
        #expect(throws: RecordingTransitionError.self) { try again.beginUpload(at: Self.now + 20) }
        #expect(again == row, "a refused move changes nothing")
        for move: (inout Recording) throws -> Void in [
            { try $0.beginUpload(at: Self.now) }, { try $0.completeUpload(memoryId: "m-2", at: Self.now) },
            { try $0.retry() },
        ] {
            var copy = row
            let error = try #require(throws: RecordingTransitionError.self) { try move(&copy) }
            #expect(error.code == .alreadyUploaded)
            #expect(copy.memoryId == "m-1")
        }
    }

    @Test("failures the server is to blame for return to pending until the fifth, which fails; the count is kept")
    func countedFailures() throws {
        var row = try uploading()
        for attempt in 1...4 {
            let status = try row.failAttempt(.protocolViolation("200 instead of 201"), at: Self.now)
            #expect(status == .pending && row.retryCount == attempt && row.offlineSince == nil)
            try row.beginUpload(at: Self.now)
        }
        let checksum = UploadFailure.server(status: 460, message: nil, retryAfter: nil)
        #expect(try row.failAttempt(checksum, at: Self.now) == .failed)
        #expect(row.retryCount == 5 && row.lastError == "server answered 460")
    }

    @Test("an unreachable server is offline, never a failure: pending after any number, since when kept")
    func offlineFailures() throws {
        var row = try uploading()
        for attempt in 1...50 {
            let failure: UploadFailure =
                attempt.isMultiple(of: 2)
                ? .network("cannot reach 10.0.0.2:8090 (connection refused)")
                : .server(status: 503, message: "down for maintenance", retryAfter: nil)
            #expect(try row.failAttempt(failure, at: Self.now + Double(attempt)) == .pending)
            #expect(row.retryCount == 0 && row.offlineAttempts == attempt)
            try row.beginUpload(at: Self.now + Double(attempt) + 1)
        }
        #expect(row.offlineSince == Self.now, "since the first attempt that found it unreachable")
        // The server answers, refusing a chunk: it is no longer unreachable, and that failure counts.
        try row.failAttempt(.server(status: 460, message: nil, retryAfter: nil), at: Self.now + 100)
        #expect(row.offlineSince == nil && row.retryCount == 1 && row.failedAttempts == 51)
        try row.retry()
        #expect(row.offlineAttempts == 0 && row.retryCount == 0 && row.failedAttempts == 0)
    }

    @Test(
        "permanent answers fail at once and keep the server's message",
        arguments: [400, 401, 404, 413, 415, 422])
    func permanentFailure(status: Int) throws {
        var row = try uploading()
        let failure = UploadFailure.server(status: status, message: "not an M4A file", retryAfter: nil)
        #expect(try row.failAttempt(failure, at: Self.now) == .failed)
        #expect(row.retryCount == 1 && row.lastError == "server answered \(status): not an M4A file")
    }

    @Test(
        "offline: network, 5xx, 408, 429; counted: 460, answers the contract does not allow; refused: 4xx, unreadable files",
        arguments: [
            (UploadFailure.network("reset"), UploadFailure.Disposition.offline),
            (.server(status: 500, message: nil, retryAfter: nil), .offline),
            (.server(status: 599, message: nil, retryAfter: nil), .offline),
            (.server(status: 408, message: nil, retryAfter: nil), .offline),
            (.server(status: 429, message: nil, retryAfter: 30), .offline),
            (.server(status: 460, message: nil, retryAfter: nil), .counted),
            (.protocolViolation("200 instead of 201"), .counted),
            (.server(status: 409, message: nil, retryAfter: nil), .refused),
            (.server(status: 413, message: nil, retryAfter: nil), .refused),
            (.localFile("no such file"), .refused),
        ])
    func classification(failure: UploadFailure, disposition: UploadFailure.Disposition) {
        #expect(failure.disposition == disposition)
        #expect(failure.isRetryable == (disposition != .refused))
    }

    @Test("a 429's Retry-After becomes the earliest next attempt")
    func retryAfter() throws {
        var row = try uploading()
        try row.failAttempt(.server(status: 429, message: "slow down", retryAfter: 30), at: Self.now)
        #expect(row.uploadStatus == .pending && row.retryNotBefore == Self.now + 30)
        try row.beginUpload(at: Self.now + 30)
        #expect(row.retryNotBefore == nil)
    }

    @Test("Retry-After: seconds or an HTTP date, capped at an hour; junk is ignored")
    func retryAfterHeader() {
        let now = Self.now
        #expect(UploadFailure.retryAfter("120", now: now) == 120)
        #expect(UploadFailure.retryAfter(" 0 ", now: now) == 0)
        #expect(UploadFailure.retryAfter("86400", now: now) == 3600)
        #expect(UploadFailure.retryAfter("99999999999999999999", now: now) == 3600)
        #expect(UploadFailure.retryAfter("Mon, 15 Jan 2024 14:31:00 GMT", now: now) == 60)
        #expect(UploadFailure.retryAfter("Mon, 15 Jan 2024 14:00:00 GMT", now: now) == 0)
        #expect(UploadFailure.retryAfter("-5", now: now) == nil)
        #expect(UploadFailure.retryAfter("soon", now: now) == nil)
        #expect(UploadFailure.retryAfter(nil, now: now) == nil)
    }

    @Test("a manual retry of a failed recording resets its count and keeps where the upload got to")
    func manualRetry() throws {
        var row = try uploading()
        try row.recordProgress(offset: 59_000_000, location: "/files/x")
        try row.failAttempt(.server(status: 415, message: "not audio", retryAfter: nil), at: Self.now)
        #expect(row.uploadStatus == .failed)
        let error = try #require(throws: RecordingTransitionError.self) { try row.beginUpload(at: Self.now) }
        #expect(error.code == .failed)
        try row.retry()
        #expect(row.uploadStatus == .pending && row.retryCount == 0 && row.lastError == nil)
        #expect(row.uploadOffset == 59_000_000 && row.uploadLocation == "/files/x")
    }

    @Test("an uploading row found on daemon start goes back to pending with its offset, location and key")
    func recovery() throws {
        var row = try uploading()
        try row.recordProgress(offset: 4_096, location: "/files/y")
        let key = row.idempotencyKey
        try row.recoverInterruptedUpload()
        #expect(row.uploadStatus == .pending && row.uploadOffset == 4_096 && row.uploadLocation == "/files/y")
        #expect(row.idempotencyKey == key && row.retryCount == 0)
        let error = try #require(throws: RecordingTransitionError.self) { try row.recoverInterruptedUpload() }
        #expect(error.code == .notUploading)
    }

    @Test("moves that need an upload in progress are refused without one")
    func needsUploading() throws {
        var row = LedgerFixtures.pending(2)
        for move: (inout Recording) throws -> Void in [
            { try $0.recordProgress(offset: 1, location: nil) }, { try $0.completeUpload(memoryId: "m", at: Self.now) },
            { try $0.failAttempt(.network("x"), at: Self.now) },
        ] {
            let error = try #require(throws: RecordingTransitionError.self) { try move(&row) }
            #expect(error.code == .notUploading)
        }
        try row.beginUpload(at: Self.now)
        #expect(throws: RecordingTransitionError.self) { try row.beginUpload(at: Self.now) }
        #expect(throws: RecordingTransitionError.self) { try row.retry() }
        #expect(throws: RecordingTransitionError.self) { try row.recordProgress(offset: -1, location: nil) }
        #expect(throws: RecordingTransitionError.self) { try row.completeUpload(memoryId: "", at: Self.now) }
    }
}
