import CanonicalJSON
import CribCallStore
import Foundation

/// What an app could not read from or save to its database lately. A failed read answers with what the app still
/// knows, never silently as "nothing": the pages show `storeProblem` (the oldest failure still failing) until the
/// same work succeeds again.
struct StoreHealth {
    private var work = StoreAttempts()

    /// `body`'s value; `fallback` when the store failed, which is kept until the same `what` works again.
    mutating func read<Value>(
        _ what: String, from database: CribCallDatabase, or fallback: Value,
        _ body: (CribCallDatabase) throws -> Value
    ) -> Value {
        attempt(what, from: database, body) ?? fallback
    }

    /// Work on the store: its value, or nil when it failed (kept until the same `what` works again).
    @discardableResult
    mutating func attempt<Value>(
        _ what: String, from database: CribCallDatabase, _ body: (CribCallDatabase) throws -> Value
    ) -> Value? {
        work.attempt(what) { try body(database) }
    }

    /// The failure the pages show, in words that say what to do; nil while every read and write works.
    var problem: String? {
        work.failing.first.map { failure in
            "CribCall could not \(failure.what) (\(Self.short(failure.reason))). Check that the disk has space and "
                + "that the data directory can be written; until then this page may miss something."
        }
    }

    /// The store's reason as a parent's screen shows it: SQLite's own words ("SQLite error 13: database or disk is
    /// full"), without the statement GRDB adds (" - while executing `SELECT …`"), at most 120 characters.
    static func short(_ reason: String) -> String {
        let sentence = reason.range(of: " - while executing").map { String(reason[..<$0.lowerBound]) } ?? reason
        return sentence.count > 120 ? sentence.prefix(119) + "…" : sentence
    }

    var json: JSONValue { problem.map { .string($0) } ?? .null }
}
