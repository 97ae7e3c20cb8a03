import Foundation
public import Logging

/// swift-log for command-line tools: each record is one line on standard error, `<label>: <message>` (metadata
/// appended as `key=value`), with no timestamp or level decoration, as people expect a command's diagnostics to
/// read. Bootstrap it once at start: `LoggingSystem.bootstrap(CommandLineLogHandler.init)`.
public struct CommandLineLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    private let label: String

    public init(label: String) {
        self.label = label
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
        FileHandle.standardError.write(
            Data(Self.line(label: label, message: "\(event.message)", metadata: merged).utf8))
    }

    /// The text of one record: `<label>: <message>[ key=value …]` and a newline, metadata sorted by key.
    static func line(label: String, message: String, metadata: Logger.Metadata = [:]) -> String {
        let details = metadata.sorted { $0.key < $1.key }.map { " \($0.key)=\($0.value)" }.joined()
        return "\(label): \(message)\(details)\n"
    }
}
