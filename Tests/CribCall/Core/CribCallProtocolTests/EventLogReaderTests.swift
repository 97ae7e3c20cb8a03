import Foundation
import Testing

@testable import CribCallProtocol

@Suite("EventLogReader: each event once, gaps counted, a new pairing starts now")
struct EventLogReaderTests {
    let pairedAt = Date(timeIntervalSince1970: 1_700_000_000)
    var before: Int64 { 1_699_999_000_000 }
    var after: Int64 { 1_700_000_500_000 }

    @Test("a replay beyond since + 1 counts the missing events once; overlaps and old seqs are not shown again")
    func gapsAndOverlaps() {
        var reader = EventLogReader(since: 10, pairedAt: pairedAt)
        // A live event queued before the monitor read EVENTS_SINCE arrives first; the replay still fills the gap.
        #expect(reader.take(seq: 40, replayed: false, at: after) == .init(show: true, record: true, notKept: 0))
        #expect(reader.take(seq: 31, replayed: true, at: after) == .init(show: true, record: true, notKept: 20))
        #expect(reader.take(seq: 32, replayed: true, at: after) == .init(show: true, record: true, notKept: 0))
        #expect(reader.take(seq: 40, replayed: true, at: after) == .init(show: false, record: false, notKept: 0))
        #expect(reader.take(seq: 9, replayed: false, at: after) == .init(show: false, record: false, notKept: 0))
        var caughtUp = EventLogReader(since: 10, pairedAt: pairedAt)
        #expect(caughtUp.take(seq: 11, replayed: true, at: after).notKept == 0)
    }

    @Test("a new pairing (since 0): the log's older events are recorded, not shown; newer ones are shown")
    func newPairing() {
        var reader = EventLogReader(since: 0, pairedAt: pairedAt)
        #expect(reader.take(seq: 700, replayed: true, at: before) == .init(show: false, record: true, notKept: 0))
        #expect(reader.take(seq: 701, replayed: true, at: after) == .init(show: true, record: true, notKept: 0))
        #expect(reader.take(seq: 702, replayed: false, at: before) == .init(show: true, record: true, notKept: 0))
    }

    @Test("the seqs remembered stay bounded over a long connection, and recent ones are still not shown twice")
    func bounded() {
        var reader = EventLogReader(since: 0, pairedAt: pairedAt)
        for seq in 1...Int64(3 * EventLogReader.memory) { _ = reader.take(seq: seq, replayed: false, at: after) }
        let last = Int64(3 * EventLogReader.memory)
        #expect(!reader.take(seq: last, replayed: false, at: after).show)
    }
}
