import Foundation
public import Logging

/// swift-log for command-line tools: each record is one line on standard error, `<label>: <message>` (metadata
/// appended as `key=value`), with no level decoration, as people expect a command's diagnostics to read; a
/// background process writing to a log file puts the time in front (`2026-11-28T14:02:31Z toukan daemon: …`).
/// Bootstrap it once at start: `LoggingSystem.bootstrap(CommandLineLogHandler.init)`.
public struct CommandLineLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    private let label: String
    private let timestamps: Bool

    public init(label: String) {
        self.init(label: label, timestamps: false)
    }

    /// - Parameter timestamps: Start each line with the time (UTC, ISO 8601), for a log file read later.
    public init(label: String, timestamps: Bool) {
        self.label = label
        self.timestamps = timestamps
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
        let line = Self.line(label: label, message: "\(event.message)", metadata: merged)
        FileHandle.standardError.write(Data(((timestamps ? Date().formatted(.iso8601) + " " : "") + line).utf8))
    }

    /// The text of one record: `<label>: <message>[ key=value …]` and a newline, metadata sorted by key.
    static func line(label: String, message: String, metadata: Logger.Metadata = [:]) -> String {
        let details = metadata.sorted { $0.key < $1.key }.map { " \($0.key)=\($0.value)" }.joined()
        return "\(label): \(message)\(details)\n"
    }
}
