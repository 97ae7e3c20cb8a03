public import Foundation

/// The network as the queue sees it.
public enum Connectivity: Sendable, Hashable {
    case offline
    /// Online since that moment (the last time the link came up).
    case online(since: Date)
}

/// What the upload queue should do now.
public enum UploadQueueAction: Sendable, Hashable {
    /// Start uploading this recording now.
    case upload(Recording.ID)
    /// An upload is in progress; one at a time.
    case busy(Recording.ID)
    /// Nothing is due before `until`, when `recording` is (ask again then, or on any event).
    case wait(until: Date, recording: Recording.ID)
    /// Recordings are pending but the network is down; ask again when it returns.
    case waitForNetwork(pending: Int)
    /// Nothing to upload (failed recordings wait for a manual retry).
    case idle
}

/// The upload queue's decisions, from the ledger rows, the network and the time: one upload at a time, the oldest
/// due recording first, backoff between attempts, at once when the network returns.
public struct UploadQueue: Sendable, Hashable {
    public var retryPolicy: UploadRetryPolicy

    public init(retryPolicy: UploadRetryPolicy = UploadRetryPolicy()) {
        self.retryPolicy = retryPolicy
    }

    /// The next action for the ledger `rows` at `now`.
    ///
    /// A pending recording is due once its backoff has passed (`lastAttempt` + the policy's delay for its
    /// `failedAttempts`, at most 10 minutes) and never before a server's Retry-After. When the link came up after
    /// its last attempt, the backoff is over (uploads start as soon as the network returns) but a Retry-After still
    /// holds, and the count of attempts is kept: failed recordings stay failed.
    public func nextAction(rows: [Recording], connectivity: Connectivity, now: Date) -> UploadQueueAction {
        if let active = rows.first(where: { $0.uploadStatus == .uploading }) { return .busy(active.id) }
        let pending = rows.filter { $0.uploadStatus == .pending }
        guard !pending.isEmpty else { return .idle }
        guard case .online(let since) = connectivity else { return .waitForNetwork(pending: pending.count) }
        let byAge = pending.sorted { ($0.recordedAt, $0.id.uuidString) < ($1.recordedAt, $1.id.uuidString) }
        let due = byAge.map { (row: $0, at: dueDate(of: $0, onlineSince: since)) }
        if let ready = due.first(where: { $0.at <= now }) { return .upload(ready.row.id) }
        let soonest = due.min { $0.at < $1.at }!
        return .wait(until: soonest.at, recording: soonest.row.id)
    }

    /// When `row` may be attempted again.
    public func dueDate(of row: Recording, onlineSince: Date) -> Date {
        guard let lastAttempt = row.lastAttempt else { return row.retryNotBefore ?? .distantPast }
        let linkReturned = onlineSince > lastAttempt
        let backoff =
            linkReturned ? .distantPast : lastAttempt + retryPolicy.delay(afterFailures: row.failedAttempts)
        return max(backoff, row.retryNotBefore ?? .distantPast)
    }

    /// Rows still `uploading` when the daemon starts: the daemon died mid-upload; they go back to pending with
    /// their offset and key. Other rows are returned unchanged.
    public static func recoverAfterRestart(_ rows: [Recording]) -> [Recording] {
        rows.map { row in
            var row = row
            if row.uploadStatus == .uploading { try? row.recoverInterruptedUpload() }
            return row
        }
    }

    /// `toukan retry --all`, the seed's pull-to-refresh: every pending or failed recording is due now with a fresh
    /// count of attempts. Uploading and uploaded rows are returned unchanged.
    public static func retryAll(_ rows: [Recording]) -> [Recording] {
        rows.map { row in
            var row = row
            if row.uploadStatus == .pending || row.uploadStatus == .failed { try? row.retry() }
            return row
        }
    }
}
