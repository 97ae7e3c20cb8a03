import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A program running beside a test (e.g. an independent protocol peer), whose stdout lines the test can wait
/// for. Nothing here blocks a Swift concurrency thread: output is collected by Foundation's reader threads and
/// waits poll with `Task.sleep`.
public final class BackgroundProcess: @unchecked Sendable {
    // Safe: `lines`, `errorText` and `exited` are guarded by `lock`; `process` is only started and signalled.
    private let process = Process()
    private let lock = NSLock()
    private var lines: [String] = []
    private var partial = Data()
    private var errorText = Data()
    private var exitStatus: Int32?
    /// The reader saw the end of stdout: every line the program printed is in `lines`.
    private var outputDrained = false
    private let input: Pipe?

    /// Starts `executable` with `arguments`.
    /// - Parameter acceptsInput: Give the program a stdin pipe that ``send(_:)`` writes to (else /dev/null).
    public init(
        _ executable: String,
        _ arguments: [String],
        environment: [String: String] = [:],
        acceptsInput: Bool = false
    ) throws {
        process.executableURL = URL(fileURLWithPath: try Subprocess.resolve(executable))
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        input = acceptsInput ? Pipe() : nil
        process.standardInput = input ?? FileHandle.nullDevice
        // Plain threads doing blocking reads: output keeps flowing even when the test process's dispatch and
        // concurrency threads are all busy (readabilityHandler runs on dispatch and was starved under load).
        let outputReader = output.fileHandleForReading
        Thread.detachNewThread { [weak self] in
            while case let data = outputReader.availableData, !data.isEmpty {
                self?.collect(data)
            }
            guard let self else { return }
            self.lock.lock()
            self.outputDrained = true
            self.lock.unlock()
        }
        let errorReader = error.fileHandleForReading
        Thread.detachNewThread { [weak self] in
            while case let data = errorReader.availableData, !data.isEmpty {
                guard let self else { return }
                self.lock.lock()
                self.errorText.append(data)
                self.lock.unlock()
            }
        }
        process.terminationHandler = { [weak self] process in
            guard let self else { return }
            self.lock.lock()
            self.exitStatus = process.terminationStatus
            self.lock.unlock()
        }
        signal(SIGPIPE, SIG_IGN)
        try process.run()
        watchExit(of: process.processIdentifier)
    }

    /// Learns of the exit on a plain thread as well: Foundation's `terminationHandler` runs from a dispatch source,
    /// which a loaded test process may not run for tens of seconds (seen: a probe that had printed its error and
    /// exited was still "running" 30 s later under `make test-stress`). `waitid` with `WNOWAIT` waits for the exit
    /// without reaping the child, so Foundation still reaps it and calls its handler; whichever comes first sets
    /// the status, with the same meaning (the exit code, or the signal that ended it).
    private func watchExit(of pid: pid_t) {
        Thread.detachNewThread { [weak self] in
            #if canImport(Glibc)
                var info = siginfo_t()
                while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0 {
                    guard errno == EINTR else { return }  // reaped already: the handler has it
                }
                let status = info._sifields._sigchld.si_status
                guard let self else { return }
                self.lock.lock()
                if self.exitStatus == nil { self.exitStatus = status }
                self.lock.unlock()
            #endif
        }
    }

    private func collect(_ data: Data) {
        guard !data.isEmpty else { return }
        lock.lock()
        defer { lock.unlock() }
        partial.append(data)
        while let newline = partial.firstIndex(of: 0x0A) {
            lines.append(String(decoding: partial[partial.startIndex..<newline], as: UTF8.self))
            partial = Data(partial[partial.index(after: newline)...])
        }
    }

    /// Writes `text` to the program's stdin (it must have been started with `acceptsInput`).
    public func send(_ text: String) {
        precondition(input != nil, "BackgroundProcess: started without acceptsInput")
        try? input?.fileHandleForWriting.write(contentsOf: Data(text.utf8))
    }

    /// Closes the program's stdin (it must have been started with `acceptsInput`): end of input, which a program
    /// can take as its cue to finish — unlike SIGTERM, it cannot be blocked by an inherited signal mask.
    public func closeInput() {
        precondition(input != nil, "BackgroundProcess: started without acceptsInput")
        try? input?.fileHandleForWriting.close()
    }

    /// The process id.
    public var processIdentifier: Int32 { process.processIdentifier }

    /// The complete lines printed so far.
    public var output: [String] {
        lock.lock()
        defer { lock.unlock() }
        return lines
    }

    /// What the program printed on stderr so far.
    public var errorOutput: String {
        lock.lock()
        defer { lock.unlock() }
        return String(decoding: errorText, as: UTF8.self)
    }

    /// The exit status, once it has exited.
    public var status: Int32? {
        lock.lock()
        defer { lock.unlock() }
        return exitStatus
    }

    /// Waits for a stdout line satisfying `predicate`.
    /// - Returns: The line, or nil after `timeout` or when the program exited without printing it.
    ///
    /// The output is checked once more after the deadline: a test process whose concurrency threads were all busy
    /// (other tests waiting synchronously for their programs) may wake this wait late, after the line arrived.
    public func line(timeout: Duration = .seconds(15), where predicate: (String) -> Bool) async -> String? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let match = output.first(where: predicate) { return match }
            if status != nil {
                await drained()
                return output.first(where: predicate)
            }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return output.first(where: predicate)
    }

    /// A peer that did not print its ready line: it exited, or its start-up took longer than the generous budget.
    public struct NotReady: Error, CustomStringConvertible {
        public var description: String
    }

    /// Waits for the line by which a peer says it has started (imports done, browser launched, socket bound).
    ///
    /// Start-up is not behaviour: on a loaded 2-core machine importing aiortc alone has taken 20 s. So a test
    /// waits here, with a budget meant never to be reached by a healthy program (it ends at once when the program
    /// exits), and starts the clocks of its real deadlines afterwards.
    /// - Parameters:
    ///   - name: What the program is, for the error.
    ///   - timeout: The start-up budget (2 minutes).
    /// - Returns: The ready line.
    /// - Throws: ``NotReady``, saying what was awaited and what the program printed on stderr.
    @discardableResult
    public func ready(
        _ name: String,
        timeout: Duration = .seconds(120),
        where predicate: (String) -> Bool
    ) async throws -> String {
        let started = ContinuousClock.now
        if let line = await line(timeout: timeout, where: predicate) { return line }
        let waited = ContinuousClock.now - started
        let why = status.map { "it exited with status \($0)" } ?? "it did not within \(waited)"
        throw NotReady(
            description: "\(name) was to print its ready line at start-up; \(why). Its stderr:\n"
                + String(errorOutput.suffix(4_000))
        )
    }

    /// Waits until what the program printed on stderr contains `text` (a log line written on another thread of the
    /// program may trail what the program did).
    /// - Returns: Whether it did before `timeout` or the program's exit.
    public func errorOutput(contains text: String, timeout: Duration = .seconds(15)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline, status == nil {
            if errorOutput.contains(text) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        try? await Task.sleep(for: .milliseconds(50))
        return errorOutput.contains(text)
    }

    /// After the exit: waits until the reader has taken in all of stdout (a loaded machine runs the reader
    /// thread late; a fixed pause lost the last line once), at most 5 s (a grandchild may keep the pipe open).
    private func drained() async {
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline, !isDrained {
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    private var isDrained: Bool {
        lock.lock()
        defer { lock.unlock() }
        return outputDrained
    }

    /// Waits until the program exits by itself.
    /// - Returns: Its exit status, or nil after `timeout` (the program is then killed).
    @discardableResult
    public func waitForExit(timeout: Duration = .seconds(30)) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let status {
                await drained()
                return status
            }
            try? await Task.sleep(for: .milliseconds(10))
        }
        if let status { return status }  // woken late (see `line`), but it did exit in time
        process.terminate()
        return nil
    }

    /// Asks the program to stop (SIGTERM), and kills it (SIGKILL) if it has not exited after `grace`.
    ///
    /// Children started from a test process can inherit a signal mask that blocks SIGTERM, so the escalation is
    /// what guarantees a peer never outlives its test.
    @discardableResult
    public func stop(grace: Duration = .seconds(1)) async -> Int32? {
        guard status == nil else { return status }
        process.terminate()
        let deadline = ContinuousClock.now + grace
        while status == nil, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        if status == nil { kill(process.processIdentifier, SIGKILL) }
        return await waitForExit(timeout: .seconds(5))
    }

    deinit {
        // Abandoned without stop(): no grace (SIGTERM may be blocked, see stop), the peer must not outlive its test.
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}
