import Foundation

/// The stretch of time one night of history covers: from noon to the next noon in the local time zone, so a night
/// that crosses midnight is one night.
struct NightRange: Sendable, Hashable {
    /// What was asked for: `tonight`, `last-night` or a date `YYYY-MM-DD` (the night that starts at noon that day).
    var name: String
    var from: Date
    var to: Date

    /// - Throws: ``Invalid`` for anything else.
    init(parsing text: String, now: Date, calendar: Calendar) throws(Invalid) {
        name = text
        let tonight = Self.noon(onOrBefore: now, calendar: calendar)
        switch text {
        case "tonight", "":
            name = "tonight"
            from = tonight
        case "last-night":
            from = calendar.date(byAdding: .day, value: -1, to: tonight)!
        default:
            let parts = text.split(separator: "-").compactMap { Int($0) }
            guard parts.count == 3, text.count == 10,
                let day = calendar.date(
                    from: DateComponents(year: parts[0], month: parts[1], day: parts[2], hour: 12)),
                calendar.component(.month, from: day) == parts[1], calendar.component(.day, from: day) == parts[2]
            else {
                throw Invalid("range must be tonight, last-night or a date like 2026-11-26 (got \(text.prefix(20)))")
            }
            from = day
        }
        to = calendar.date(byAdding: .day, value: 1, to: from)!
    }

    /// The last noon at or before `date`.
    static func noon(onOrBefore date: Date, calendar: Calendar) -> Date {
        let today = calendar.date(bySettingHour: 12, minute: 0, second: 0, of: date)!
        return today <= date ? today : calendar.date(byAdding: .day, value: -1, to: today)!
    }

    /// The night (its noon's date, `YYYY-MM-DD`) a moment belongs to.
    static func day(of date: Date, calendar: Calendar) -> String {
        let noon = noon(onOrBefore: date, calendar: calendar)
        let parts = calendar.dateComponents([.year, .month, .day], from: noon)
        return String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!)
    }

    struct Invalid: Error, Sendable, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
