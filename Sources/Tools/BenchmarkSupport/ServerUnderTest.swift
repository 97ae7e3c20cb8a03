public import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A server program built beside the running benchmark (same configuration, e.g. `.build/release/`), started with
/// `--json` and reached once it prints `{"event":"ready","port":N}`.
public final class ServerUnderTest: Sendable {
    public let process: Process
    public let port: Int

    /// Starts `product` with `arguments` (which must make it print the ready line) and waits up to 30 s for it.
    /// - Throws: ``BenchmarkFailure`` naming the program when it does not become ready (not built in this
    ///   configuration, or it failed at start-up: its last stderr lines are in the message).
    public convenience init(product: String, arguments: [String]) async throws {
        try await self.init(executable: siblingExecutable(product), arguments: arguments, name: product)
    }

    /// The same for any program (a Python peer).
    public init(executable: URL, arguments: [String], name: String? = nil) async throws {
        let product = name ?? executable.lastPathComponent
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        do {
            try process.run()
        } catch {
            throw BenchmarkFailure(
                description: "\(product) cannot be started (\(error)); build it with swift build -c release "
                    + "--product \(product)")
        }
        let errorLog = ErrorTail()
        let errorHandle = errors.fileHandleForReading
        Thread { errorLog.drain(errorHandle) }.start()
        let handle = output.fileHandleForReading
        let later = LaterLines()
        let readyPort: Int? = await withCheckedContinuation { continuation in
            Thread {
                var buffer = Data()
                var answered = false
                while true {
                    let chunk = handle.availableData
                    if chunk.isEmpty { break }
                    buffer += chunk
                    guard !answered else {
                        // keep draining so the server never blocks on a full pipe; whole lines are kept, stamped
                        while let end = buffer.firstIndex(of: 0x0A) {
                            later.append(String(decoding: buffer[buffer.startIndex..<end], as: UTF8.self))
                            buffer.removeSubrange(buffer.startIndex...end)
                        }
                        continue
                    }
                    while let end = buffer.firstIndex(of: 0x0A) {
                        let line = Data(buffer[buffer.startIndex..<end])
                        buffer.removeSubrange(buffer.startIndex...end)
                        if !answered, let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any],
                            object["event"] as? String == "ready", let port = object["port"] as? Int
                        {
                            answered = true
                            continuation.resume(returning: port)
                        } else if answered {
                            later.append(String(decoding: line, as: UTF8.self))
                        }
                    }
                }
                if !answered { continuation.resume(returning: nil) }
            }.start()
        }
        guard let readyPort else {
            process.terminate()
            process.waitUntilExit()
            throw BenchmarkFailure(
                description: "\(product) exited without its ready line; its last words: \(errorLog.text)")
        }
        self.process = process
        self.port = readyPort
        self.later = later
    }

    private let later: LaterLines

    /// The first `count` lines printed after the ready line that contain `text`, each with when it arrived; fewer
    /// when `timeout` passes first.
    public func lines(matching text: String, count: Int, timeout: Duration) -> [(line: String, arrived: Date)] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let found = later.all.filter { $0.line.contains(text) }
            if found.count >= count || ContinuousClock.now >= deadline { return Array(found.prefix(count)) }
            usleep(20_000)
        }
    }

    public var pid: Int32 { process.processIdentifier }

    /// `http://127.0.0.1:PORT`.
    public var httpURL: String { "http://127.0.0.1:\(port)" }

    /// SIGTERM, then SIGKILL if it has not exited within 10 s; waits for the exit.
    public func stop() {
        end(process, grace: .seconds(10))
    }
}

/// Lines a server printed after its ready line, stamped when they arrived (the newest 10,000).
private final class LaterLines: Sendable {
    private let lines = Mutex<[(line: String, arrived: Date)]>([])

    func append(_ line: String) {
        let now = Date()
        lines.withLock {
            $0.append((line, now))
            if $0.count > 10_000 { $0.removeFirst($0.count - 10_000) }
        }
    }

    var all: [(line: String, arrived: Date)] { lines.withLock { $0 } }
}

/// The last 2 KiB a child wrote on stderr, for the failure message.
private final class ErrorTail: Sendable {
    private let buffer = Mutex(Data())

    func drain(_ handle: FileHandle) {
        while true {
            let chunk = handle.availableData
            if chunk.isEmpty { return }
            buffer.withLock { $0 = ($0 + chunk).suffix(2_048) }
        }
    }

    var text: String { String(decoding: buffer.withLock { $0 }, as: UTF8.self) }
}

/// Ends `process`: SIGTERM, then SIGKILL after `grace` (a child can inherit a signal mask that blocks SIGTERM
/// from the thread that started it); waits for the exit.
public func end(_ process: Process, grace: Duration) {
    guard process.isRunning else { return }
    process.terminate()
    let deadline = ContinuousClock.now + grace
    while process.isRunning, ContinuousClock.now < deadline { usleep(10_000) }
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    process.waitUntilExit()
}

/// A program built beside the running executable (the same build configuration).
public func siblingExecutable(_ name: String) -> URL {
    URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL.deletingLastPathComponent()
        .appendingPathComponent(name)
}

/// Resident memory of a process in bytes (VmRSS of /proc/PID/status); 0 when it cannot be read.
public func residentBytes(of pid: Int32) -> Int {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
    else { return 0 }
    return (Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) * 1024
}

/// User plus system CPU time of another process so far, in seconds (utime + stime of /proc/PID/stat); nil when
/// it cannot be read.
public func cpuSeconds(of pid: Int32) -> Double? {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = stat.lastIndex(of: ")")
    else { return nil }
    // After "pid (comm) ": state is field 3, utime and stime are fields 14 and 15.
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

/// Prints a line at once (stdout is block-buffered on a pipe, and a benchmark may be stopped before it flushes).
public func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
