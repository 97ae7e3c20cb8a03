import BenchmarkSupport
import Foundation
import Synchronization

/// The daemon a failed run must not leave behind (0: none seen yet).
let daemonPID = Atomic<Int32>(0)

/// Kills the daemon when the benchmark exits, also through ``failBenchmark(_:)``.
func endDaemonAtExit() {
    atexit {
        let pid = daemonPID.load(ordering: .relaxed)
        if pid > 0 { kill(pid, SIGKILL) }
    }
}

/// A program run to its end: its exit status and what it printed.
struct Finished {
    var status: Int32
    var output: String
    var errors: String
}

/// Runs `executable` with `arguments` and waits for it (its output is small: read at the end).
func run(_ executable: URL, _ arguments: [String], environment: [String: String]? = nil) async throws -> Finished {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    if let environment { process.environment = environment }
    let output = Pipe()
    let errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    let exited = AsyncStream<Void>.makeStream()
    process.terminationHandler = { _ in exited.continuation.finish() }
    try process.run()
    let outputData = Task.detached { output.fileHandleForReading.readDataToEndOfFile() }
    let errorData = Task.detached { errors.fileHandleForReading.readDataToEndOfFile() }
    for await _ in exited.stream {}
    return Finished(
        status: process.terminationStatus, output: String(decoding: await outputData.value, as: UTF8.self),
        errors: String(decoding: await errorData.value, as: UTF8.self))
}

/// A program found on PATH.
func onPath(_ name: String) -> URL? {
    let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
    return directories.map { URL(fileURLWithPath: String($0)).appendingPathComponent(name) }
        .first { FileManager.default.isExecutableFile(atPath: $0.path) }
}

/// An upload of `file` by curl as a person would type it (`curl -F file=@…`), timed by curl itself
/// (`time_total`, so process start-up is not counted against it). `Expect:` is emptied: curl would otherwise wait
/// up to 1 s for a `100 Continue` before sending a large body.
func curlUpload(_ file: URL, to server: String) async throws -> Double {
    guard let curl = onPath("curl") else {
        throw BenchmarkFailure(description: "curl is not installed (apt-get install curl)")
    }
    let result = try await run(
        curl,
        [
            "-sS", "-o", "/dev/null", "-w", "%{http_code} %{time_total}", "-H", "Expect:", "-F",
            "file=@\(file.path)", "\(server)/upload",
        ])
    let fields = result.output.split(separator: " ")
    guard result.status == 0, fields.first == "201", fields.count == 2, let seconds = Double(fields[1]) else {
        throw BenchmarkFailure(description: "curl's upload failed: \(result.output) \(result.errors)")
    }
    return seconds
}

/// The `toukan` command built beside this benchmark, on one data directory, with no server from the environment.
struct ToukanCommand {
    let dataDirectory: String

    @discardableResult
    func callAsFunction(_ arguments: String...) async throws -> Finished {
        var environment = ProcessInfo.processInfo.environment
        environment["TOUKAN_SERVER"] = nil
        let result = try await run(
            siblingExecutable("toukan"), arguments + ["--data-dir", dataDirectory], environment: environment)
        guard result.status == 0 else {
            throw BenchmarkFailure(
                description: "toukan \(arguments.joined(separator: " ")) failed (\(result.status)): "
                    + "\(result.output)\(result.errors) (build it with swift build -c release --product toukan)")
        }
        return result
    }

    /// `toukan status --json`; notes the daemon's pid for ``endDaemonAtExit()``.
    func status() async throws -> [String: Any] {
        let result = try await self("status", "--json")
        let status = (try? JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]) ?? [:]
        if let pid = status["pid"] as? Int { daemonPID.store(Int32(pid), ordering: .relaxed) }
        return status
    }

    /// Waits until the recording has `seconds` of audio; returns the status then.
    func waitRecorded(_ seconds: Double, timeout: Duration = .seconds(120)) async throws -> [String: Any] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let status = try await status()
            if status["elapsedSeconds"] as? Double ?? 0 >= seconds { return status }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw BenchmarkFailure(description: "the recording did not reach \(seconds) s within \(timeout)")
    }

    /// Ends the daemon (it outlives each command by design): SIGTERM, then SIGKILL after 5 s.
    func endDaemon() async {
        guard let pid = (try? await status())?["pid"] as? Int else { return }
        kill(pid_t(pid), SIGTERM)
        let deadline = ContinuousClock.now + .seconds(5)
        while kill(pid_t(pid), 0) == 0, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        kill(pid_t(pid), SIGKILL)
    }
}
