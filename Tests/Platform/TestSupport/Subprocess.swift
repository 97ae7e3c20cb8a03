public import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs programs from tests: the package's own built executables and independent tools such as openssl.
public enum Subprocess {
    /// The result of running a program to completion.
    public struct Result: Sendable {
        public var status: Int32
        public var stdout: [UInt8]
        public var stderr: [UInt8]
        public var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
        public var stderrText: String { String(decoding: stderr, as: UTF8.self) }
    }

    /// Why a program could not be run at all.
    public struct NotFound: Error, CustomStringConvertible {
        public var description: String
    }

    /// Runs a program with arguments and optional stdin, and waits for it on a thread of its own.
    ///
    /// The wait never holds a thread of the concurrency pool: on a 2-core machine the pool has two threads, and
    /// tests waiting synchronously for programs (psql, openssl, ip) starved every other test of them.
    /// - Parameters:
    ///   - executable: An absolute path, or a name looked up on PATH.
    ///   - arguments: The arguments.
    ///   - stdin: Bytes written to the program's standard input, then closed.
    ///   - environment: Extra environment variables.
    public static func run(
        _ executable: String,
        _ arguments: [String] = [],
        stdin: [UInt8] = [],
        environment: [String: String] = [:]
    ) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(
                    with: Swift.Result {
                        try runBlocking(executable, arguments, stdin: stdin, environment: environment)
                    }
                )
            }
        }
    }

    /// ``run(_:_:stdin:environment:)`` blocking the calling thread: only for code that runs outside the
    /// concurrency pool (exit handlers, threads of its own).
    public static func runBlocking(
        _ executable: String,
        _ arguments: [String] = [],
        stdin: [UInt8] = [],
        environment: [String: String] = [:]
    ) throws -> Result {
        let path = try resolve(executable)
        // A child that exits before reading all its input must not kill the test process with SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let input = Pipe()
        let output = Pipe()
        let error = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = error
        try process.run()
        // Read both pipes on their own threads so a chatty child never blocks on a full pipe.
        let collected = CollectedOutput()
        let group = DispatchGroup()
        for (pipe, isError) in [(output, false), (error, true)] {
            group.enter()
            // Threads, not dispatch: under load the test process's dispatch threads may all be busy.
            Thread.detachNewThread {
                let data = pipe.fileHandleForReading.readDataToEndOfFile()
                collected.set(Array(data), isError: isError)
                group.leave()
            }
        }
        try? input.fileHandleForWriting.write(contentsOf: Data(stdin))
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
        group.wait()
        return Result(status: process.terminationStatus, stdout: collected.stdout, stderr: collected.stderr)
    }

    /// Finds a program on PATH, or explains how to get it.
    public static func resolve(_ executable: String) throws -> String {
        if executable.hasPrefix("/") { return executable }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(executable)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw NotFound(description: "\(executable) is not installed: run `make test`, which installs what tests need")
    }

    /// The path of an executable product built alongside the test bundle (e.g. `cribcall`).
    public static func builtProduct(_ name: String) throws -> String {
        let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = testBinary.deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent(name).path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        let fallback = Fixtures.repositoryRoot.appendingPathComponent(".build/debug/\(name)").path
        if FileManager.default.isExecutableFile(atPath: fallback) { return fallback }
        throw NotFound(description: "the \(name) executable was not built next to the tests; run `swift build` first")
    }

    /// A fresh temporary directory, removed by the caller.
    public static func temporaryDirectory(_ prefix: String = "homeapps-test") throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(prefix)-\(UUID().uuidString.prefix(8))", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

/// Output collected from two reader threads.
private final class CollectedOutput: @unchecked Sendable {
    // Safe: every access holds `lock`.
    private let lock = NSLock()
    private var out: [UInt8] = []
    private var err: [UInt8] = []

    func set(_ bytes: [UInt8], isError: Bool) {
        lock.lock()
        defer { lock.unlock() }
        if isError { err = bytes } else { out = bytes }
    }

    var stdout: [UInt8] {
        lock.lock()
        defer { lock.unlock() }
        return out
    }

    var stderr: [UInt8] {
        lock.lock()
        defer { lock.unlock() }
        return err
    }
}

/// The independent peers tests compare against (installed by `make test` into `.venv`).
public enum InteropPeers {
    /// The venv's Python, if installed.
    public static var python: String? {
        let candidates: [String?] = [
            ProcessInfo.processInfo.environment["HOMEAPPS_PYTHON"],
            Fixtures.repositoryRoot.appendingPathComponent(".venv/bin/python").path,
        ]
        return candidates.compactMap { $0 }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// True when the run must not skip interop tests (`make test` and CI set HOMEAPPS_PYTHON).
    public static var required: Bool {
        ProcessInfo.processInfo.environment["HOMEAPPS_PYTHON"] != nil
            || ProcessInfo.processInfo.environment["CI"] != nil
    }

    /// Whether a Python peer test can run. When it cannot and is not required, says so loudly on stderr.
    public static func pythonAvailable(for test: String) -> Bool {
        if python != nil || required { return true }
        FileHandle.standardError.write(
            Data(
                "WARNING: SKIPPING \(test): the Python interop venv is missing. Run `make test` to install it.\n".utf8))
        return false
    }
}
