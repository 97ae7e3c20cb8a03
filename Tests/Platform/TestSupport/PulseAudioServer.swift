import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A private PulseAudio sound server (Debian's `pulseaudio`) for one test: its own runtime directory and socket,
/// no other clients, a room made of a null sink (`room`) with a 440 Hz sine playing into it, so the source
/// `room.monitor` is a live microphone that hears a steady tone. Programs reach it through ``environment``
/// (`PULSE_SERVER`); the test process's own environment is left alone.
///
/// It can be killed like a crashed sound server and started again on the same socket, as a user's
/// `pulseaudio -k` or a PulseAudio restart after an update would.
public final class PulseAudioServer: Sendable {
    /// The source that hears the tone.
    public static let microphone = "room.monitor"
    /// The tone's frequency in hertz.
    public static let toneFrequency = 440

    private let directory: URL
    private let program: String
    private let current = Mutex<BackgroundProcess?>(nil)

    /// `PULSE_SERVER` for this server, and a client configuration that never starts a server of its own.
    public var environment: [String: String] {
        ["PULSE_SERVER": "unix:" + socket, "PULSE_CLIENTCONFIG": directory.appendingPathComponent("client.conf").path]
    }

    private var socket: String { directory.appendingPathComponent("native").path }

    private init(directory: URL, program: String) {
        self.directory = directory
        self.program = program
    }

    /// Starts a server and waits until it answers (`pactl list short sources` shows its microphone).
    /// - Returns: nil after a loud skip when pulseaudio or pactl is not installed (a recorded failure when the
    ///   run requires every tool, as `make test` and CI do).
    public static func start(for test: String) async throws -> PulseAudioServer? {
        guard let program = try? Subprocess.resolve("pulseaudio"), (try? Subprocess.resolve("pactl")) != nil else {
            let what = "pulseaudio and pactl (Debian packages pulseaudio, pulseaudio-utils)"
            if InteropPeers.required {
                Issue.record("\(test) needs \(what); `make test` installs them")
            } else {
                FileHandle.standardError.write(Data("WARNING: SKIPPING \(test): \(what) not installed.\n".utf8))
            }
            return nil
        }
        // Short: a Unix socket path has room for 107 bytes.
        let directory = URL(fileURLWithPath: "/tmp/pa-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let server = PulseAudioServer(directory: directory, program: program)
        let script = """
            load-module module-native-protocol-unix socket=\(server.socket) auth-anonymous=1
            load-module module-null-sink sink_name=room rate=44100
            load-module module-sine sink=room frequency=\(toneFrequency)

            """
        try Data(script.utf8).write(to: directory.appendingPathComponent("room.pa"))
        try Data("autospawn = no\n".utf8).write(to: directory.appendingPathComponent("client.conf"))
        try await server.restart()
        return server
    }

    /// Starts the server (again, after ``kill()``) on the same socket and waits until it answers.
    ///
    /// pulseaudio closes every descriptor it inherits as it starts. Foundation's `Process` learns that a child
    /// exited when one such descriptor closes, and then waits for that child on the one thread that notices every
    /// child's exit, which would block it for as long as the server runs and hang every later program of the test
    /// process. So the server runs under `timeout`, which keeps the descriptor until the server really ends (and
    /// ends a forgotten server after 10 minutes).
    public func restart() async throws {
        // -n: no default script; no daemonizing, no idle exit; the pid file says whom ``kill()`` kills.
        let process = try BackgroundProcess(
            "timeout",
            [
                "600", program, "-n", "-F", directory.appendingPathComponent("room.pa").path, "--daemonize=no",
                "--exit-idle-time=-1", "--use-pid-file=yes", "--disable-shm=yes", "--log-target=stderr",
            ],
            environment: ["XDG_RUNTIME_DIR": directory.path, "HOME": directory.path])
        current.withLock { $0 = process }
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if process.status != nil { break }
            let answer = try await Subprocess.run("pactl", ["list", "short", "sources"], environment: environment)
            if answer.status == 0, answer.stdoutText.contains(Self.microphone), serverPID != nil { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        await process.stop()
        throw NotStarted(
            description: "pulseaudio did not start with its room; its stderr:\n\(process.errorOutput.suffix(3_000))")
    }

    /// The server's own process id, from its pid file.
    private var serverPID: pid_t? {
        let file = directory.appendingPathComponent("pulse/pid")
        return (try? String(contentsOf: file, encoding: .utf8)).flatMap {
            pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }

    /// Why the server did not start.
    public struct NotStarted: Error, CustomStringConvertible {
        public var description: String
    }

    /// Kills the server at once (SIGKILL, as a crash): its clients lose their connection.
    public func kill() async {
        guard let process = current.withLock({ $0.take() }) else { return }
        if let pid = serverPID { Glibc.kill(pid, SIGKILL) }
        _ = await process.waitForExit(timeout: .seconds(10))
        try? FileManager.default.removeItem(at: directory.appendingPathComponent("pulse/pid"))
    }

    /// Stops the server and removes its directory.
    public func stop() async {
        await current.withLock { $0.take() }?.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}
