import Foundation
public import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The server's log format on stderr: one line per record, `YYYY-MM-DD HH:MM:SS <level> <message>` (UTC, seed
/// §18.1's timestamp format), then any metadata as `key=value` in key order.
///
/// What goes into a message is decided where it is logged: the signaling records carry only the fields seed §18.1
/// allows (``WebSocketOutbound``), and the server logs no request data (no addresses, no URLs beyond the server's own
/// listening address, never SDP or ICE).
public struct SignalingLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    public var logLevel: Logger.Level = .info
    private let output: Output

    /// A handler writing to standard error.
    public init(level: Logger.Level = .info) {
        self.logLevel = level
        self.output = .standardError
    }

    /// A handler that hands each finished line to `sink` (tests).
    public init(level: Logger.Level = .info, sink: @escaping @Sendable (String) -> Void) {
        self.logLevel = level
        self.output = .sink(sink)
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let explicit = event.metadata { merged.merge(explicit) { $1 } }
        var line = "\(Self.timestamp(Date())) \(event.level) \(event.message)"
        for key in merged.keys.sorted() {
            line += " \(key)=\(merged[key]!)"
        }
        output.write(line)
    }

    /// `YYYY-MM-DD HH:MM:SS` in UTC.
    static func timestamp(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : String(value) }
        let year = String(parts.tm_year + 1900)
        return "\(String(repeating: "0", count: max(0, 4 - year.count)))\(year)-\(two(parts.tm_mon + 1))-"
            + "\(two(parts.tm_mday)) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))"
    }

    /// Creates the server's logger.
    public static func logger(label: String = "bemyears", level: Logger.Level = .info) -> Logger {
        Logger(label: label) { _ in SignalingLogHandler(level: level) }
    }

    private enum Output: Sendable {
        case standardError
        case sink(@Sendable (String) -> Void)

        private static let lock = Mutex(())

        func write(_ line: String) {
            switch self {
            case .standardError:
                Self.lock.withLock { _ in
                    FileHandle.standardError.write(Data((line + "\n").utf8))
                }
            case .sink(let sink):
                sink(line)
            }
        }
    }
}
