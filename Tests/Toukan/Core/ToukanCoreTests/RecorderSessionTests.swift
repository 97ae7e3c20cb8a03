import Foundation
import Testing
import ToukanCore
import ToukanTestSupport

@Suite("Recorder start/stop: the seed's replies, free-space rules, the timer")
struct RecorderSessionTests {
    static let now = LedgerFixtures.epoch

    @Test("the replies are the seed's Siri phrases word for word")
    func phrases() {
        #expect(ToukanReply.recordingStarted.description == "Recording started")
        #expect(ToukanReply.alreadyRecording.description == "Toukan is already recording")
        #expect(ToukanReply.recordingSaved.description == "Recording saved. I'll upload it in the background.")
        #expect(ToukanReply.notRecording.description == "Toukan isn't recording right now")
    }

    @Test("start, start again (no-op), stop, stop again (no-op)")
    func startStop() {
        var session = RecorderSession()
        let name = RecordingName(startedAt: Self.now)
        #expect(
            session.start(now: Self.now, freeBytes: 10_000_000_000, existingNames: [])
                == .start(name, reply: .recordingStarted))
        #expect(
            session.start(now: Self.now + 5, freeBytes: 10_000_000_000, existingNames: [])
                == .alreadyRecording(.alreadyRecording))
        #expect(session.current == name)
        #expect(session.elapsed(at: Self.now + 75.5) == 75.5)
        #expect(session.stop(now: Self.now + 90.25) == .stop(name, elapsed: 90.25, reply: .recordingSaved))
        #expect(session.stop(now: Self.now + 91) == .notRecording(.notRecording))
        #expect(session.current == nil && session.elapsed(at: Self.now) == nil)
    }

    @Test("a recording right after another in the same second gets a new name")
    func noReuse() {
        var session = RecorderSession()
        let existing = [RecordingName(startedAt: Self.now).fileName]
        guard case .start(let name, _) = session.start(now: Self.now, freeBytes: .max, existingNames: existing) else {
            Issue.record("did not start")
            return
        }
        #expect(name.sequence == 2)
    }

    @Test("under 100 MB free, recording does not start, and the message says how much is free")
    func lowSpace() {
        var session = RecorderSession()
        let outcome = session.start(now: Self.now, freeBytes: 87_345_678, existingNames: [])
        #expect(
            outcome
                == .refused(
                    "Not enough free space to record: 87.3 MB free, Toukan needs at least 100 MB. "
                        + "Free some space and try again."))
        #expect(session.current == nil)
        #expect(StoragePolicy().refusalToStart(freeBytes: 100_000_000) == nil)
        #expect(StoragePolicy().refusalToStart(freeBytes: 99_999_999) != nil)
    }

    @Test("the 500 MB warning is given once, when the file crosses it")
    func sizeWarning() {
        let policy = StoragePolicy()
        #expect(policy.sizeWarning(previousBytes: 400_000_000, currentBytes: 499_999_999) == nil)
        #expect(
            policy.sizeWarning(previousBytes: 499_999_999, currentBytes: 500_100_000)
                == "This recording has passed 500 MB (500.1 MB now); it keeps recording, but check the free space.")
        #expect(policy.sizeWarning(previousBytes: 500_100_000, currentBytes: 600_000_000) == nil)
    }

    @Test(
        "timer MM:SS, H:MM:SS from an hour; positions HH:MM:SS; durations as the history shows them",
        arguments: [
            (0.0, "00:00", "00:00:00", "0s"), (59.99, "00:59", "00:00:59", "59s"), (60, "01:00", "00:01:00", "1m 00s"),
            (754, "12:34", "00:12:34", "12m 34s"), (3599, "59:59", "00:59:59", "59m 59s"),
            (3600, "1:00:00", "01:00:00", "1h 00m 00s"), (7_323, "2:02:03", "02:02:03", "2h 02m 03s"),
            (-5, "00:00", "00:00:00", "0s"), (.nan, "00:00", "00:00:00", "0s"),
        ])
    func elapsedTime(seconds: Double, timer: String, position: String, duration: String) {
        #expect(ElapsedTime.timer(seconds) == timer)
        #expect(ElapsedTime.position(seconds) == position)
        #expect(ElapsedTime.duration(seconds) == duration)
    }

    @Test("a gap reads \"14 s missing at 00:12:03\"")
    func gapMarker() {
        #expect(Gap(start: 723, length: 14).description == "14 s missing at 00:12:03")
        #expect(Gap(start: 3_723.9, length: 0.2).description == "<1 s missing at 01:02:03")
        #expect(Gap(start: 0, length: 90.6).description == "91 s missing at 00:00:00")
    }
}
