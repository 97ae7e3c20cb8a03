import CribCallProtocol
import CribCallStore
import Foundation
import Testing

@Suite("Noise events")
struct NoiseEventTests {
    /// 2023-11-14T22:13:20Z in milliseconds.
    private let baseMs: Int64 = 1_700_000_000_000

    @discardableResult
    private func append(
        _ database: CribCallDatabase,
        _ index: Int,
        timestamp: Int64? = nil
    ) throws -> NoiseEventRecord {
        try database.appendNoiseEvent(
            eventId: "event-\(index)",
            kind: "noise",
            timestamp: timestamp ?? baseMs + Int64(index),
            peakLevel: 70,
            autoStreamSessionId: nil
        )
    }

    @Test("seq starts at 1 and strictly increases; the record holds every field")
    func seqIncreases() throws {
        let database = try CribCallDatabase.inMemory()
        let first = try database.appendNoiseEvent(
            eventId: "e1", kind: "cry", timestamp: baseMs, peakLevel: 83, autoStreamSessionId: "s-1"
        )
        let second = try append(database, 2)
        #expect(first.seq == 1)
        #expect(second.seq == 2)
        let stored = try database.noiseEvents(afterSeq: 0, limit: 10)
        #expect(stored == [first, second])
        #expect(stored[0].kind == "cry")
        #expect(stored[0].peakLevel == 83)
        #expect(stored[0].autoStreamSessionId == "s-1")
    }

    @Test("a duplicate eventId is refused and uses up no row")
    func duplicateEventId() throws {
        let database = try CribCallDatabase.inMemory()
        try append(database, 1)
        #expect(throws: CribCallStoreError.duplicateEventId("event-1")) { try append(database, 1) }
        #expect(try database.noiseEvents(afterSeq: 0, limit: 10).count == 1)
    }

    @Test("noiseEvents(afterSeq:limit:) returns later events in seq order, at most limit")
    func afterSeqOrderAndLimit() throws {
        let database = try CribCallDatabase.inMemory()
        // Timestamps deliberately decrease, so ordering by timestamp would be visible.
        for index in 1...10 { try append(database, index, timestamp: baseMs - Int64(index)) }
        #expect(try database.noiseEvents(afterSeq: 3, limit: 4).map(\.seq) == [4, 5, 6, 7])
        #expect(try database.noiseEvents(afterSeq: 8, limit: 100).map(\.seq) == [9, 10])
        #expect(try database.noiseEvents(afterSeq: 10, limit: 100).isEmpty)
        #expect(try database.noiseEvents(afterSeq: 0, limit: 0).isEmpty)
        #expect(throws: CribCallStoreError.self) { try database.noiseEvents(afterSeq: 0, limit: -1) }
    }

    @Test("seq continues after pruning: 1,200 appended, pruned to 1,000, next seq is 1,201")
    func seqNeverReused() throws {
        try StoreFixtures.withDirectory { directory in
            let database = try CribCallDatabase(directory: directory)
            for index in 1...1200 { try append(database, index) }
            let cutoff = Date(timeIntervalSince1970: TimeInterval(baseMs / 1000) + 86_400)
            #expect(try database.pruneNoiseEvents(newerThan: cutoff) == 200)
            let kept = try database.noiseEvents(afterSeq: 0, limit: 5000)
            #expect(kept.count == 1000)
            #expect(kept.first?.seq == 201)
            #expect(kept.last?.seq == 1200)

            // Pruning everything must not let SQLite hand out old numbers either.
            #expect(try database.pruneNoiseEvents(keepLast: 0, newerThan: cutoff) == 1000)
            #expect(try append(database, 1201).seq == 1201)

            // Also across a reopen of the file.
            let reopened = try CribCallDatabase(directory: directory)
            #expect(try append(reopened, 1202).seq == 1202)
        }
    }

    @Test("pruning keeps an event that is among the last keepLast OR at/after the cutoff, deletes the rest")
    func pruningRule() throws {
        let database = try CribCallDatabase.inMemory()
        let cutoff = Date(timeIntervalSince1970: TimeInterval(baseMs / 1000))
        // seq 1...6: old, old, exactly at cutoff, new, old, new.
        let offsets: [Int64] = [-5000, -1, 0, 10, -2, 20]
        for (index, offset) in offsets.enumerated() { try append(database, index + 1, timestamp: baseMs + offset) }

        // keepLast 1 keeps seq 6 (also new); age keeps 3, 4, 6; seq 1, 2, 5 go.
        #expect(try database.pruneNoiseEvents(keepLast: 1, newerThan: cutoff) == 3)
        #expect(try database.noiseEvents(afterSeq: 0, limit: 10).map(\.seq) == [3, 4, 6])

        // A later cutoff: everything is old, so only the last 2 by seq survive.
        #expect(try database.pruneNoiseEvents(keepLast: 2, newerThan: cutoff.addingTimeInterval(60)) == 1)
        #expect(try database.noiseEvents(afterSeq: 0, limit: 10).map(\.seq) == [4, 6])
        #expect(throws: CribCallStoreError.self) { try database.pruneNoiseEvents(keepLast: -1, newerThan: cutoff) }
    }

    @Test("the default keepLast is 1,000: old events beyond it go, recent ones beyond it stay")
    func defaultKeepLast() throws {
        let database = try CribCallDatabase.inMemory()
        for index in 1...1005 { try append(database, index, timestamp: index <= 2 ? baseMs + 100 : baseMs - 100) }
        // seq 1, 2 are new (kept by age); 3...5 are old and outside the last 1,000 (6...1005).
        let cutoff = Date(timeIntervalSince1970: TimeInterval(baseMs / 1000))
        #expect(try database.pruneNoiseEvents(newerThan: cutoff) == 3)
        let seqs = try database.noiseEvents(afterSeq: 0, limit: 2000).map(\.seq)
        #expect(seqs.count == 1002)
        #expect(Array(seqs.prefix(3)) == [1, 2, 6])
    }

    @Test("message(monitorId:replayed:) carries every field; replayed false leaves the field out")
    func messageConversion() throws {
        let record = NoiseEventRecord(
            seq: 42, eventId: "e42", kind: "noise", timestamp: baseMs, peakLevel: 77, autoStreamSessionId: "s9"
        )
        let live = record.message(monitorId: "M1", replayed: false)
        #expect(
            live
                == NoiseEvent(
                    monitorId: "M1", timestamp: baseMs, peakLevel: 77, seq: 42, eventId: "e42", kind: "noise",
                    autoStreamSessionId: "s9", replayed: nil
                ))
        #expect(record.message(monitorId: "M1", replayed: true).replayed == true)
    }

    @Test("safety alerts share the log's seq with noise events and replay as SAFETY_ALERT, without evidence")
    func safetyAlerts() throws {
        let database = try CribCallDatabase.inMemory()
        try append(database, 1)
        let alert = try database.appendSafetyAlert(
            alertId: "alert-2", kind: "face_covered", severity: "high", timestamp: baseMs + 2, confidence: 0.9,
            detector: "face-lost")
        try append(database, 3)
        #expect(alert.seq == 2)
        let replay = try database.noiseEvents(afterSeq: 0, limit: 10).map { $0.replayMessage(monitorId: "M") }
        guard replay.count == 3, case .noiseEvent(let first) = replay[0], case .safetyAlert(let second) = replay[1],
            case .noiseEvent(let third) = replay[2]
        else {
            Issue.record("expected noise, alert, noise: \(replay)")
            return
        }
        #expect(first.seq == 1 && third.seq == 3 && first.replayed == true)
        #expect(
            second
                == SafetyAlert(
                    seq: 2, alertId: "alert-2", kind: .faceCovered, severity: .high, detectedAt: baseMs + 2,
                    confidence: 0.9, detector: "face-lost", replayed: true))
        #expect(throws: CribCallStoreError.duplicateEventId("alert-2")) {
            try database.appendSafetyAlert(
                alertId: "alert-2", kind: "crying", severity: "medium", timestamp: 0, confidence: 1, detector: "d")
        }
    }
}
