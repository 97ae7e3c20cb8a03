import Logging
import Terminal
import ToukanRecorder

/// What the `toukan` program shows before it runs anything.
public enum ToukanApp {
    /// The forms of `--audio-source`.
    public static let sourceSyntax = RecordingSource.syntax
}

/// Diagnostics of the `toukan` program: one line on stderr per record, `toukan <command>: <message>`; the daemon's
/// (its stderr is `daemon.log`) with the time in front.
public enum ToukanLogging {
    /// Call once at start, with the program's arguments.
    public static func bootstrap(arguments: [String]) {
        let daemon = arguments.dropFirst().first == "daemon"
        LoggingSystem.bootstrap { CommandLineLogHandler(label: $0, timestamps: daemon) }
    }
}
