import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Single key presses on an interactive terminal (no Enter needed), for keyboard shortcuts. The terminal keeps its
/// signal keys (Ctrl-C still stops the program); echo and line editing are off until ``restore()``.
public final class KeyPresses: Sendable {
    private let saved: Mutex<termios?>

    /// Starts reading keys when stdin is a terminal; nil otherwise (a service, a pipe, a test).
    public init?(_ handle: @escaping @Sendable (UInt8) -> Void) {
        guard isatty(STDIN_FILENO) == 1 else { return nil }
        var settings = termios()
        guard tcgetattr(STDIN_FILENO, &settings) == 0 else { return nil }
        saved = Mutex(settings)
        var keys = settings
        keys.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &keys.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        guard tcsetattr(STDIN_FILENO, TCSANOW, &keys) == 0 else { return nil }
        let reader = Thread {
            var byte: UInt8 = 0
            while read(STDIN_FILENO, &byte, 1) == 1 { handle(byte) }
        }
        reader.name = "terminal-keys"
        reader.start()
    }

    /// Puts the terminal back as it was. Idempotent.
    public func restore() {
        saved.withLock { settings in
            guard var original = settings else { return }
            tcsetattr(STDIN_FILENO, TCSANOW, &original)
            settings = nil
        }
    }

    deinit {
        restore()
    }
}
