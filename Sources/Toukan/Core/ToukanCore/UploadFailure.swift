public import Foundation

/// Why one upload attempt ended without a confirmed memory, as the queue needs it: retry later, or stop and keep
/// the server's message for the person to read.
public enum UploadFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// No answer: connection refused or cut, DNS, TLS, timeout. Retryable.
    case network(String)
    /// The server answered with an error status; `message` is what its body said, `retryAfter` its Retry-After in
    /// seconds (see `retryAfter(_:now:)`).
    case server(status: Int, message: String?, retryAfter: TimeInterval?)
    /// The server answered something the contract does not allow (a 200 instead of 201, a body that is not the
    /// receipt). Not retryable: the same server gives the same answer.
    case protocolViolation(String)
    /// The recording's file cannot be read (deleted, unreadable). Not retryable.
    case localFile(String)

    /// What the queue makes of a failure.
    public enum Disposition: Sendable, Hashable {
        /// The server could not be reached or could not take the upload now (network trouble, 5xx, 408, 429): the
        /// seed's "backend down is the same as offline". Retried for as long as it takes, never counted toward
        /// `failed`.
        case offline
        /// The server answered, but not as it should (a chunk corrupted in transit, 460; an answer the contract does
        /// not allow, such as a captive portal's page or redirect): retried, and counted toward `failed`.
        case counted
        /// The content is refused (400, 413, 415, 422 and every other 4xx) or the file cannot be read: failed at
        /// once, with the reason.
        case refused
    }

    public var disposition: Disposition {
        switch self {
        case .network: return .offline
        case .server(let status, _, _):
            if status >= 500 || status == 408 || status == 429 { return .offline }
            return status == 460 ? .counted : .refused
        case .protocolViolation: return .counted
        case .localFile: return .refused
        }
    }

    /// Whether the queue tries again by itself (everything but a refusal of the content).
    public var isRetryable: Bool { disposition != .refused }

    /// What the history shows for it.
    public var description: String {
        switch self {
        case .network(let detail): return "network: \(detail)"
        case .server(let status, let message, _):
            return message.map { "server answered \(status): \($0)" } ?? "server answered \(status)"
        case .protocolViolation(let detail): return "unexpected answer from the server: \(detail)"
        case .localFile(let detail): return "cannot read the recording: \(detail)"
        }
    }

    /// The longest Retry-After honoured: a bad header must not park the queue for a day.
    public static let maximumRetryAfter: TimeInterval = 3600

    /// A Retry-After header (RFC 9110 §10.2.3: delay-seconds or an IMF-fixdate) as seconds from `now`, at most
    /// `maximumRetryAfter`; nil when absent or unreadable.
    public static func retryAfter(_ header: String?, now: Date) -> TimeInterval? {
        guard let header = header?.trimmingCharacters(in: .whitespaces), !header.isEmpty else { return nil }
        if header.utf8.allSatisfy({ (0x30...0x39).contains($0) }) {
            guard header.utf8.count <= 10, let seconds = Int(header) else { return maximumRetryAfter }
            return min(TimeInterval(seconds), maximumRetryAfter)
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        guard let date = formatter.date(from: header) else { return nil }
        return min(max(0, date.timeIntervalSince(now)), maximumRetryAfter)
    }
}
