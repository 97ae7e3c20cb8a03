import Foundation
import Logging
import Terminal

/// Diagnostics of the `cribcall` program: one line on stderr per record, `cribcall <command>: <message>`, with
/// where it happened as metadata (`connection=3 listener=4f1c… session=…`).
///
/// The level is `info` (what a person needs: warnings, failures); `CRIBCALL_LOG_LEVEL=debug` adds how connections,
/// pairing sessions and streams come and go (the monitor's, the listener's, QUIC admission, the WebRTC peers'
/// states), `trace` more. Never a PIN, a token or a key, at any level.
public enum CribCallLogging {
    /// The variable that sets the level.
    public static let levelVariable = "CRIBCALL_LOG_LEVEL"

    /// Call once at start.
    public static func bootstrap() {
        let level = level(ProcessInfo.processInfo.environment[levelVariable])
        LoggingSystem.bootstrap { label in
            var handler = CommandLineLogHandler(label: label)
            handler.logLevel = level
            return handler
        }
    }

    /// The level `text` names (`debug`, `TRACE`, …); `info` for nothing or anything else.
    static func level(_ text: String?) -> Logger.Level {
        text.flatMap { Logger.Level(rawValue: $0.lowercased()) } ?? .info
    }
}
