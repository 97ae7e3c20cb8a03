import Foundation
import Testing
import ToukanCore
import ToukanTestSupport

@Suite(
    "Upload queue: one at a time, oldest due first, backoff 1-2-4-8 s up to 10 min, at once when the network returns")
struct UploadQueueTests {
    static let now = LedgerFixtures.epoch + 3_600
    static let online = Connectivity.online(since: LedgerFixtures.epoch)
    let queue = UploadQueue()
    /// A failure the server is to blame for (a captive portal's page instead of the receipt): counted.
    static let counted = UploadFailure.protocolViolation("POST /upload answered 200, not 201")

    /// `row` after `failures` failures (the server unreachable unless `failure` says otherwise), the last one at
    /// `lastAttempt`.
    func failed(
        _ row: Recording, failures: Int, lastAttempt: Date, _ failure: UploadFailure = .network("unreachable")
    ) throws -> Recording {
        var row = row
        for _ in 0..<failures {
            try row.beginUpload(at: lastAttempt)
            try row.failAttempt(failure, at: lastAttempt)
        }
        return row
    }

    @Test("nothing pending: idle; failed rows wait for a manual retry")
    func idle() throws {
        let exhausted = try failed(LedgerFixtures.pending(1), failures: 5, lastAttempt: Self.now, Self.counted)
        #expect(exhausted.uploadStatus == .failed)
        #expect(queue.nextAction(rows: [], connectivity: Self.online, now: Self.now) == .idle)
        #expect(queue.nextAction(rows: [exhausted], connectivity: Self.online, now: Self.now + 999) == .idle)
    }

    @Test("the oldest pending recording is uploaded first, whatever the order of the rows")
    func oldestFirst() {
        let rows = [
            LedgerFixtures.pending(3, minutesAfterEpoch: 30), LedgerFixtures.pending(1, minutesAfterEpoch: 10),
            LedgerFixtures.pending(2, minutesAfterEpoch: 20),
        ]
        #expect(queue.nextAction(rows: rows, connectivity: Self.online, now: Self.now) == .upload(LedgerFixtures.id(1)))
        #expect(
            queue.nextAction(rows: rows.reversed(), connectivity: Self.online, now: Self.now)
                == .upload(LedgerFixtures.id(1)))
    }

    @Test("one upload at a time: while one is uploading, the queue is busy")
    func oneAtATime() throws {
        var active = LedgerFixtures.pending(2, minutesAfterEpoch: 20)
        try active.beginUpload(at: Self.now)
        let rows = [LedgerFixtures.pending(1), active]
        #expect(queue.nextAction(rows: rows, connectivity: Self.online, now: Self.now) == .busy(active.id))
    }

    @Test("offline: pending recordings wait for the network")
    func offline() {
        let rows = [LedgerFixtures.pending(1), LedgerFixtures.pending(2)]
        #expect(queue.nextAction(rows: rows, connectivity: .offline, now: Self.now) == .waitForNetwork(pending: 2))
    }

    @Test("after failure n the next attempt waits 2^(n-1) s", arguments: [(1, 1.0), (2, 2), (3, 4), (4, 8)])
    func backoff(failures: Int, wait: Double) throws {
        let row = try failed(LedgerFixtures.pending(1), failures: failures, lastAttempt: Self.now)
        let id = row.id
        #expect(
            queue.nextAction(rows: [row], connectivity: Self.online, now: Self.now)
                == .wait(until: Self.now + wait, recording: id))
        #expect(
            queue.nextAction(rows: [row], connectivity: Self.online, now: Self.now + wait - 0.001)
                == .wait(until: Self.now + wait, recording: id))
        #expect(queue.nextAction(rows: [row], connectivity: Self.online, now: Self.now + wait) == .upload(id))
    }

    @Test("failures the server is to blame for: attempts at 0, 1, 3, 7, 15 s, then failed")
    func schedule() throws {
        var row = LedgerFixtures.pending(1)
        var clock = Self.now
        var attempts: [Double] = []
        while row.uploadStatus == .pending {
            switch queue.nextAction(rows: [row], connectivity: Self.online, now: clock) {
            case .upload:
                attempts.append(clock.timeIntervalSince(Self.now))
                try row.beginUpload(at: clock)
                try row.failAttempt(.server(status: 460, message: "checksum mismatch", retryAfter: nil), at: clock)
            case .wait(let until, _): clock = until
            case let other:
                Issue.record("unexpected \(other)")
                return
            }
        }
        #expect(attempts == [0, 1, 3, 7, 15])
        #expect(row.uploadStatus == .failed)
    }

    @Test(
        "a server down for a day (refused, 502, 503, timeouts): tried again and again, waits doubling up to 10 minutes, never failed",
        arguments: [
            UploadFailure.network("cannot reach 10.0.0.2:8090 (connection refused)"),
            .server(status: 502, message: nil, retryAfter: nil), .server(status: 503, message: "busy", retryAfter: nil),
            .server(status: 408, message: nil, retryAfter: nil),
        ])
    func serverDown(failure: UploadFailure) throws {
        var row = LedgerFixtures.pending(1)
        var clock = Self.now
        var attempts: [Double] = []
        while clock < Self.now + 86_400 {
            switch queue.nextAction(rows: [row], connectivity: Self.online, now: clock) {
            case .upload:
                attempts.append(clock.timeIntervalSince(Self.now))
                try row.beginUpload(at: clock)
                #expect(try row.failAttempt(failure, at: clock + 0.5) == .pending)
            case .wait(let until, _): clock = until
            case let other:
                Issue.record("unexpected \(other)")
                return
            }
        }
        #expect(Array(attempts.prefix(12)) == [0, 1, 3, 7, 15, 31, 63, 127, 255, 511, 1023, 1623])
        let gaps = zip(attempts.dropFirst(), attempts).map { $0 - $1 }
        #expect(gaps.max() == 600, "never more than 10 minutes between two tries")
        #expect(attempts.count > 140, "\(attempts.count) tries in a day")
        #expect(row.uploadStatus == .pending && row.retryCount == 0 && row.offlineAttempts == attempts.count)
        #expect(row.offlineSince == Self.now, "unreachable since the first attempt that found it so")
        // It answers again: uploaded, and nothing says it was ever unreachable.
        try row.beginUpload(at: clock)
        try row.completeUpload(memoryId: "m-1", at: clock)
        #expect(row.offlineSince == nil && row.uploadStatus == .uploaded)
    }

    @Test("a due recording goes before an older one still in backoff; the soonest due is awaited otherwise")
    func dueBeforeWaiting() throws {
        let older = try failed(LedgerFixtures.pending(1), failures: 3, lastAttempt: Self.now)
        let newer = LedgerFixtures.pending(2, minutesAfterEpoch: 5)
        #expect(queue.nextAction(rows: [older, newer], connectivity: Self.online, now: Self.now) == .upload(newer.id))
        let other = try failed(LedgerFixtures.pending(2, minutesAfterEpoch: 5), failures: 1, lastAttempt: Self.now)
        #expect(
            queue.nextAction(rows: [older, other], connectivity: Self.online, now: Self.now)
                == .wait(until: Self.now + 1, recording: other.id))
    }

    @Test("when the link returns, waiting rows are due at once; failed rows stay failed")
    func networkReturn() throws {
        let waiting = try failed(LedgerFixtures.pending(1), failures: 4, lastAttempt: Self.now, Self.counted)
        let exhausted = try failed(LedgerFixtures.pending(2), failures: 5, lastAttempt: Self.now, Self.counted)
        let rows = [waiting, exhausted]
        #expect(queue.nextAction(rows: rows, connectivity: .offline, now: Self.now + 1) == .waitForNetwork(pending: 1))
        let back = Connectivity.online(since: Self.now + 2)
        #expect(queue.nextAction(rows: rows, connectivity: back, now: Self.now + 2) == .upload(waiting.id))
        #expect(waiting.retryCount == 4 && exhausted.uploadStatus == .failed && exhausted.retryCount == 5)
    }

    @Test("a server's Retry-After holds even when the link returns")
    func retryAfterSurvivesLinkReturn() throws {
        var row = LedgerFixtures.pending(1)
        try row.beginUpload(at: Self.now)
        try row.failAttempt(.server(status: 429, message: nil, retryAfter: 60), at: Self.now)
        let back = Connectivity.online(since: Self.now + 5)
        #expect(
            queue.nextAction(rows: [row], connectivity: back, now: Self.now + 5)
                == .wait(until: Self.now + 60, recording: row.id))
        #expect(queue.nextAction(rows: [row], connectivity: back, now: Self.now + 60) == .upload(row.id))
    }

    @Test("retry --all: pending and failed rows are due now with a fresh count; others are untouched")
    func retryAll() throws {
        let waiting = try failed(LedgerFixtures.pending(1), failures: 3, lastAttempt: Self.now)
        let exhausted = try failed(LedgerFixtures.pending(2), failures: 5, lastAttempt: Self.now, Self.counted)
        var done = LedgerFixtures.pending(3)
        try done.beginUpload(at: Self.now)
        try done.completeUpload(memoryId: "m-3", at: Self.now)
        let refreshed = UploadQueue.retryAll([waiting, exhausted, done])
        #expect(refreshed.map(\.uploadStatus) == [.pending, .pending, .uploaded])
        #expect(refreshed.map(\.retryCount) == [0, 0, 0] && refreshed.map(\.offlineAttempts) == [0, 0, 0])
        #expect(refreshed[2] == done)
        #expect(queue.nextAction(rows: refreshed, connectivity: Self.online, now: Self.now) == .upload(waiting.id))
    }

    @Test("on restart, uploading rows become pending and are resumed first if oldest")
    func restart() throws {
        var interrupted = LedgerFixtures.pending(1)
        try interrupted.beginUpload(at: Self.now)
        try interrupted.recordProgress(offset: 12_345, location: "/files/z")
        let rows = UploadQueue.recoverAfterRestart([interrupted, LedgerFixtures.pending(2, minutesAfterEpoch: 1)])
        #expect(rows[0].uploadStatus == .pending && rows[0].uploadOffset == 12_345)
        #expect(queue.nextAction(rows: rows, connectivity: Self.online, now: Self.now) == .upload(interrupted.id))
    }
}
