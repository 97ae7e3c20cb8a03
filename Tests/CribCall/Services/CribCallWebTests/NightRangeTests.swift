import Foundation
import Testing

@testable import CribCallWeb

@Suite("A night of history: noon to noon, local time")
struct NightRangeTests {
    static var calendar: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "Europe/Paris")!
        return calendar
    }

    static func date(_ text: String) -> Date {
        let formatter = ISO8601DateFormatter()
        return formatter.date(from: text)!
    }

    @Test("tonight before and after noon; last night; a date; refusals")
    func ranges() throws {
        let calendar = Self.calendar
        let earlyMorning = Self.date("2026-11-26T02:15:00+01:00")
        let tonight = try NightRange(parsing: "tonight", now: earlyMorning, calendar: calendar)
        #expect(tonight.from == Self.date("2026-11-25T12:00:00+01:00"))
        #expect(tonight.to == Self.date("2026-11-26T12:00:00+01:00"))
        let afternoon = Self.date("2026-11-26T15:00:00+01:00")
        #expect(
            try NightRange(parsing: "tonight", now: afternoon, calendar: calendar).from
                == Self.date("2026-11-26T12:00:00+01:00"))
        let last = try NightRange(parsing: "last-night", now: earlyMorning, calendar: calendar)
        #expect(last.from == Self.date("2026-11-24T12:00:00+01:00") && last.to == tonight.from)
        let day = try NightRange(parsing: "2026-03-28", now: earlyMorning, calendar: calendar)
        #expect(day.from == Self.date("2026-03-28T12:00:00+01:00"))
        #expect(day.to == Self.date("2026-03-29T12:00:00+02:00"), "the clocks changed that night: 23 hours")
        for bad in ["yesterday", "2026-02-30", "2026-13-01", "26-11-01", "2026-11-1", ""] where !bad.isEmpty {
            #expect(throws: NightRange.Invalid.self) {
                try NightRange(parsing: bad, now: earlyMorning, calendar: calendar)
            }
        }
        #expect(NightRange.day(of: earlyMorning, calendar: calendar) == "2026-11-25")
        #expect(NightRange.day(of: afternoon, calendar: calendar) == "2026-11-26")
    }
}
