import Foundation
import Synchronization

/// Standard output for people: whole lines, one writer at a time, and a last line that can count down in place
/// (cursor up, clear line, once a second) until the next line is written.
public final class TerminalOutput: Sendable {
    private let countdown = Mutex<Task<Void, Never>?>(nil)
    private let output = Mutex(())

    public init() {}

    /// Writes `text` (stopping a countdown first, so the line it rewrites is never a newer one).
    public func write(_ text: String) {
        stopCountdown()
        output.withLock { _ in FileHandle.standardOutput.write(Data(text.utf8)) }
    }

    /// Rewrites the last line with `line(remaining)` every second, from `seconds - 1` down to 0.
    public func countDown(from seconds: Int, line: @escaping @Sendable (Int) -> String) {
        let task = Task { [weak self] in
            for remaining in stride(from: seconds - 1, through: 0, by: -1) {
                do { try await Task.sleep(for: .seconds(1)) } catch { return }
                self?.rewriteLastLine(line(remaining))
            }
        }
        countdown.withLock { $0 = task }
    }

    /// Stops the countdown, if any.
    public func stopCountdown() {
        countdown.withLock { task in
            task?.cancel()
            task = nil
        }
    }

    /// Replaces the last line, unless the countdown was stopped: checked under the output lock, so a line written
    /// after ``stopCountdown()`` is never the one erased.
    private func rewriteLastLine(_ line: String) {
        output.withLock { _ in
            guard !Task.isCancelled else { return }
            FileHandle.standardOutput.write(Data(("\u{1B}[1A\r\u{1B}[2K" + line + "\n").utf8))
        }
    }

    /// Whether standard output is an interactive terminal (a countdown there makes sense).
    public static var isInteractive: Bool { isatty(STDOUT_FILENO) == 1 }
}
