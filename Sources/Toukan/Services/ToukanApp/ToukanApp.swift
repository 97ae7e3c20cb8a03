import Logging
import Terminal
import ToukanRecorder

/// What the `toukan` program shows before it runs anything.
public enum ToukanApp {
    /// The forms of `--audio-source`.
    public static let sourceSyntax = RecordingSource.syntax
}

/// Diagnostics of the `toukan` program: one line on stderr per record, `toukan <command>: <message>`.
public enum ToukanLogging {
    /// Call once at start.
    public static func bootstrap() {
        LoggingSystem.bootstrap(CommandLineLogHandler.init)
    }
}
