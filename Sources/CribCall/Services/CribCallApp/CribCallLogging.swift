import Logging
import Terminal

/// Diagnostics of the `cribcall` program: one line on stderr per record, `cribcall <command>: <message>`.
public enum CribCallLogging {
    /// Call once at start.
    public static func bootstrap() {
        LoggingSystem.bootstrap(CommandLineLogHandler.init)
    }
}
