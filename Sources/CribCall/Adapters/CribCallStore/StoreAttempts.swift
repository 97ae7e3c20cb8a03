/// Work on the store that may fail (a full disk, an I/O error), remembered by what it does: a failure is reported the
/// first time, not on every retry of the same work (a poll every 250 ms, every alert), and forgotten when the same
/// work succeeds again. What each caller does with a failure (an event, a page's banner) is its own.
public struct StoreAttempts: Sendable {
    /// The work failing now, in the order it first failed, with why.
    public private(set) var failing: [(what: String, reason: String)] = []

    public init() {}

    /// `body`'s value, or nil when it threw. `firstFailure` hears of the failure when `what` was not failing already.
    @discardableResult
    public mutating func attempt<Value>(
        _ what: String, _ body: () throws -> Value,
        firstFailure: (_ what: String, _ error: any Error) -> Void = { _, _ in }
    ) -> Value? {
        do {
            let value = try body()
            failing.removeAll { $0.what == what }
            return value
        } catch {
            if let index = failing.firstIndex(where: { $0.what == what }) {
                failing[index].reason = "\(error)"
            } else {
                failing.append((what, "\(error)"))
                firstFailure(what, error)
            }
            return nil
        }
    }
}
