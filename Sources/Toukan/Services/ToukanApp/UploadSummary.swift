import CanonicalJSON
import Foundation
import ToukanCore
import ToukanStore

/// Where uploads stand and why, in words: each recording's status for `toukan history`, and one line for
/// `toukan status`. An unreachable server is said to be unreachable, since when and when the next try is; no
/// server at all says how to set one.
struct UploadSummary {
    let entries: [HistoryEntry]
    /// The upload server (nil: none set).
    let server: URL?
    let now: Date
    var queue = UploadQueue()

    /// What `toukan start --server` wants, said where a server is missing.
    static let setServer = "no upload server is set (`toukan start --server URL` sets one)"

    /// One recording's status, e.g. "waiting: 192.168.1.20:8090 unreachable since 14:02, next try 14:12".
    func status(of entry: HistoryEntry) -> String {
        let recording = entry.recording
        switch recording.uploadStatus {
        case .pending: return waiting(recording)
        case .uploading:
            return "uploading" + (entry.progress.map { " \(Int(($0.fraction * 100).rounded())) %" } ?? "")
        case .uploaded: return "uploaded"
        case .failed: return "failed: \(recording.lastError ?? "unknown error") — `toukan retry` sends it again"
        }
    }

    private func waiting(_ recording: Recording) -> String {
        guard server != nil else { return "waiting to upload: " + Self.setServer }
        let next = nextTry(recording).map { next -> String in
            let wait = next.timeIntervalSince(now)
            if wait <= 0.5 { return "trying again now" }
            return wait < 60 ? "next try in \(Int(wait.rounded())) s" : "next try at \(Self.time(next, now: now))"
        }
        if let since = recording.offlineSince {
            return "waiting: \(serverName) unreachable since \(Self.time(since, now: now))"
                + (next.map { ", \($0)" } ?? "")
        }
        if recording.retryCount > 0 {
            return "waiting to try again (\(recording.retryCount) of \(queue.retryPolicy.maximumAttempts) attempts "
                + "failed: \(recording.lastError ?? "unknown error"))" + (next.map { ", \($0)" } ?? "")
        }
        return "waiting to upload"
    }

    /// When the queue tries `recording` next (nil: it was never tried, so at once).
    func nextTry(_ recording: Recording) -> Date? {
        guard recording.lastAttempt != nil || recording.retryNotBefore != nil else { return nil }
        return queue.dueDate(of: recording, onlineSince: .distantPast)
    }

    private var serverName: String {
        guard let server, let host = server.host else { return "the server" }
        return server.port.map { "\(host):\($0)" } ?? host
    }

    /// `toukan status`'s line about uploads; nil when nothing waits, uploads or failed.
    var line: String? {
        let recordings = entries.map(\.recording)
        var parts: [String] = []
        if let uploading = entries.first(where: { $0.recording.uploadStatus == .uploading }) {
            parts.append(status(of: uploading))
        }
        let pending = recordings.filter { $0.uploadStatus == .pending }
        if let first = pending.min(by: { $0.recordedAt < $1.recordedAt }) {
            let reason = waiting(first)
            let count = "\(pending.count) waiting"
            parts.append(reason == "waiting to upload" ? count : count + reason.dropFirst("waiting".count))
        }
        let failed = recordings.filter { $0.uploadStatus == .failed }.count
        if failed > 0 { parts.append("\(failed) failed (`toukan history` says why, `toukan retry` sends again)") }
        return parts.isEmpty ? nil : "Uploads: " + parts.joined(separator: "; ")
    }

    /// The same, for `--json`.
    var json: JSONValue {
        let recordings = entries.map(\.recording)
        var object: [String: JSONValue] = [
            "pending": .number(Double(recordings.filter { $0.uploadStatus == .pending }.count)),
            "uploading": .number(Double(recordings.filter { $0.uploadStatus == .uploading }.count)),
            "failed": .number(Double(recordings.filter { $0.uploadStatus == .failed }.count)),
            "server": server.map { .string($0.absoluteString) } ?? .null,
        ]
        let pending = recordings.filter { $0.uploadStatus == .pending }.sorted { $0.recordedAt < $1.recordedAt }
        if let since = pending.compactMap(\.offlineSince).min() {
            object["unreachableSince"] = .string(since.formatted(.iso8601))
        }
        if let next = pending.compactMap(nextTry).min() { object["nextTry"] = .string(next.formatted(.iso8601)) }
        return .object(object)
    }

    /// `14:12` today, `25 Nov 2026, 14:12` another day.
    static func time(_ date: Date, now: Date) -> String {
        Calendar.current.isDate(date, inSameDayAs: now)
            ? date.formatted(date: .omitted, time: .shortened)
            : date.formatted(date: .abbreviated, time: .shortened)
    }
}
