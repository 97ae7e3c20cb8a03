import CanonicalJSON
import CribCallStore
import Foundation
import Hummingbird

/// One night of history for either app: when monitoring ran, what happened, told as resolved.
enum HistoryReport {
    /// How many events one night's history lists at most.
    static let historyLimit = 300

    /// The README's `history`.
    /// - Parameters:
    ///   - events: The events of `from..<to` (ms), newest first, at most ``historyLimit``, each with the name of the
    ///     monitor it came from (nil on the monitor itself).
    /// - Throws: `NightRange.Invalid` for a range that is not tonight, last-night or a date; the store's error when
    ///   the night cannot be read (never an empty night instead).
    static func json(
        _ range: String, now date: Date, database: CribCallDatabase, listening: Bool = false,
        events load: (_ from: Int64, _ to: Int64) throws -> [(event: NoiseEventRecord, monitorName: String?)]
    ) throws -> JSONValue {
        let calendar = Calendar.current
        let night = try NightRange(parsing: range, now: date, calendar: calendar)
        let from = Self.milliseconds(night.from)
        let to = Self.milliseconds(night.to)
        let now = Self.milliseconds(date)
        let sessions = try database.monitoringSessions(from: from, to: to)
        let loaded = try load(from, to)
        let events = loaded.map(\.event)
        let updates = try database.alertUpdates(for: events.filter(\.isSafetyAlert).map(\.eventId))
        var items = loaded.map { entry in
            var item = ActivityWording.item(entry.event, update: updates[entry.event.eventId], heard: listening)
            if let name = entry.monitorName { item.monitorName = name }
            return item
        }
        items += sessions.flatMap { ActivityWording.items($0, listening: listening) }.filter {
            $0.timestamp >= from && $0.timestamp < to
        }
        items.sort { $0.timestamp > $1.timestamp }
        // Time monitored inside the night: each run's overlap with it (a run still going counts until now).
        let monitored = sessions.reduce(Int64(0)) { total, session in
            let end = session.endedAt ?? max(session.lastSeenAt, min(now, to))
            return total + max(0, min(end, to) - max(session.startedAt, from))
        }
        let alerts = events.filter(\.isSafetyAlert).count
        let summary: String
        if sessions.isEmpty {
            summary = "No monitoring on this night"
        } else if alerts == 0 {
            summary = "Monitoring stayed normal"
        } else {
            summary = "Monitoring continued after \(alerts) \(alerts == 1 ? "alert" : "alerts")"
        }
        let starts = try database.monitoringSessionStarts(before: now + 1, limit: 400)
        let days = Set(
            starts.map { NightRange.day(of: Date(timeIntervalSince1970: Double($0) / 1000), calendar: calendar) })
        return [
            "range": .string(night.name), "from": .number(Double(from)), "to": .number(Double(to)),
            "summary": ["durationSec": .number(Double(monitored / 1000)), "text": .string(summary)],
            "sessions": .array(
                sessions.map {
                    [
                        "startedAt": .number(Double($0.startedAt)),
                        "endedAt": $0.endedAt.map { .number(Double($0)) } ?? .null,
                    ]
                }),
            "events": .array(items.map(WebAPI.json)),
            "days": .array(days.sorted().map { .string($0) }),
        ]
    }

    /// The answer to `GET api/history?range=`: the night, a 400 for a range that is not one, a 503 saying what to do
    /// when the store cannot be read.
    static func answer(_ range: String, _ report: (String) async throws -> JSONValue) async -> Response {
        do {
            return WebAPI.answer(try await report(range))
        } catch let invalid as NightRange.Invalid {
            return WebAPI.refusal(.badRequest, invalid.description)
        } catch {
            return WebAPI.storeRefusal("read the history", error, nothingDone: "nothing is lost")
        }
    }

    static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }
}

extension MonitorWebApp {
    /// One night of the monitor's history.
    func history(_ range: String) throws -> JSONValue {
        try HistoryReport.json(range, now: wallClock(), database: database) { from, to in
            try database.events(from: from, to: to, limit: HistoryReport.historyLimit).map { ($0, nil) }
        }
    }
}
