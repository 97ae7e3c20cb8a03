import Foundation
import Testing
import ToukanCore
import ToukanTestSupport

@Suite("Recording names: toukan_{UTC timestamp}.m4a, -2… within one second")
struct RecordingNameTests {
    static let epoch = LedgerFixtures.epoch

    @Test("the seed's example name comes from 2024-01-15 14:30:00 UTC; fractions of a second are dropped")
    func seedExample() {
        #expect(RecordingName(startedAt: Self.epoch).fileName == "toukan_2024-01-15T14-30-00.m4a")
        #expect(RecordingName(startedAt: Self.epoch + 0.999).fileName == "toukan_2024-01-15T14-30-00.m4a")
        #expect(RecordingName(startedAt: Self.epoch + 1).fileName == "toukan_2024-01-15T14-30-01.m4a")
    }

    @Test("a second recording in the same second gets -2, a third -3; other seconds are not affected")
    func collisions() {
        let first = RecordingName.next(startedAt: Self.epoch, existing: [])
        let second = RecordingName.next(startedAt: Self.epoch, existing: [first.fileName, "notes.txt"])
        let third = RecordingName.next(startedAt: Self.epoch + 0.5, existing: [first.fileName, second.fileName])
        #expect(first.fileName == "toukan_2024-01-15T14-30-00.m4a")
        #expect(second.fileName == "toukan_2024-01-15T14-30-00-2.m4a")
        #expect(third.fileName == "toukan_2024-01-15T14-30-00-3.m4a")
        #expect(RecordingName.next(startedAt: Self.epoch + 1, existing: [first.fileName]).sequence == 1)
    }

    @Test(
        "names read back to the same time and sequence",
        arguments: [0.0, 1, 59, 86_399, 1_000_000_000, 4_102_444_799])
    func roundTrip(offset: Double) throws {
        for sequence in [1, 2, 17] {
            let name = RecordingName(startedAt: Date(timeIntervalSince1970: offset), sequence: sequence)
            let parsed = try #require(RecordingName(fileName: name.fileName), "\(name.fileName)")
            #expect(parsed == name)
        }
    }

    @Test(
        "anything but an exact recording name is refused",
        arguments: [
            "", "toukan_.m4a", "toukan_2024-01-15T14-30-00.wav", "Toukan_2024-01-15T14-30-00.m4a",
            "toukan_2024-01-15T14:30:00.m4a", "toukan_2024-01-15 14-30-00.m4a", "toukan_2024-02-30T14-30-00.m4a",
            "toukan_2024-01-15T24-00-00.m4a", "toukan_2024-1-15T14-30-00.m4a", "toukan_2024-01-15T14-30-00-1.m4a",
            "toukan_2024-01-15T14-30-00-0.m4a", "toukan_2024-01-15T14-30-00-02.m4a", "toukan_2024-01-15T14-30-00-.m4a",
            "toukan_2024-01-15T14-30-00-x.m4a", "toukan_+024-01-15T14-30-00.m4a", "toukan_2024-01-15T14-30-00.m4a.tmp",
        ])
    func refused(name: String) {
        #expect(RecordingName(fileName: name) == nil)
    }

    @Test("names sort by time, then sequence")
    func ordering() {
        let names = [
            RecordingName(startedAt: Self.epoch + 1), RecordingName(startedAt: Self.epoch, sequence: 2),
            RecordingName(startedAt: Self.epoch),
        ]
        #expect(names.sorted().map(\.fileName).map { $0.dropFirst(24) } == ["00.m4a", "00-2.m4a", "01.m4a"])
    }
}
