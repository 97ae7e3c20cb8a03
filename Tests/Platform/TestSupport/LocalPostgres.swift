import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A throwaway PostgreSQL server for tests: `initdb` in a fresh temporary directory, `postgres` run in the
/// foreground as a child of the test process on a Unix socket in that directory and on 127.0.0.1 at a random free
/// port, trust authentication, no fsync; stopped with `pg_ctl stop -m immediate`. Driven through the PostgreSQL
/// programs (TestSupport links no PostgreSQL client).
///
/// Not `pg_ctl start`: the daemon it leaves behind would inherit the descriptor through which Foundation's
/// `Process` learns that its child exited, so the test process would wait for `pg_ctl` forever.
///
/// As root (CI, `make test`) the server programs run as the `postgres` user that Debian's `postgresql` package
/// creates (`initdb` refuses to run as root); otherwise as the current user. One server per test process
/// (``shared()``), stopped at exit; each test takes its own database from ``createDatabase(_:)``.
///
/// When PostgreSQL is not installed, ``shared()`` throws ``Unavailable``: the tests fail with what to install,
/// they are never skipped.
public final class LocalPostgres: Sendable {
    /// PostgreSQL cannot be started here; the description says what to do.
    public struct Unavailable: Error, CustomStringConvertible {
        public var description: String
    }

    /// One database of the server.
    public struct Database: Sendable {
        public let name: String
        /// `postgres://postgres@127.0.0.1:PORT/NAME?sslmode=disable`
        public let tcpURL: String
        /// `postgres://postgres@%2Ftmp%2F…:PORT/NAME` (the Unix socket in the server's directory)
        public let socketURL: String
    }

    /// The PostgreSQL programs' directory, e.g. `/usr/lib/postgresql/15/bin`.
    public let binaries: String
    /// The temporary directory: `data/`, the socket, `server.log`.
    public let directory: String
    public let port: Int
    private let runAsUser: String?
    /// The `postgres` process (through `runuser` as root); a new one after ``restart(down:)``.
    private let process: Mutex<BackgroundProcess>
    private var server: BackgroundProcess { process.withLock { $0 } }

    private init(binaries: String, directory: String, port: Int, runAsUser: String?, server: BackgroundProcess) {
        self.binaries = binaries
        self.directory = directory
        self.port = port
        self.runAsUser = runAsUser
        self.process = Mutex(server)
    }

    /// A server of the caller's own (for a test that restarts it), stopped by ``shutdown()`` or at exit.
    public static func startPrivate() async throws -> LocalPostgres {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try LocalPostgres.start() })
            }
        }
    }

    /// Stops the server (`pg_ctl stop -m fast`: sessions are cut, committed data stays), waits `down`, and starts it
    /// again on the same port and data; returns once it accepts connections.
    public func restart(down: Duration) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            Thread.detachNewThread {
                continuation.resume(with: Result { try self.restartBlocking(down: down) })
            }
        }
    }

    /// Stops it and removes its directory.
    public func shutdown() async {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                self.stop(removing: true)
                continuation.resume()
            }
        }
    }

    private func restartBlocking(down: Duration) throws {
        let stop = try Self.run(
            runAsUser, "\(binaries)/pg_ctl", ["-D", "\(directory)/data", "-m", "fast", "-w", "stop"])
        guard stop.status == 0 else { throw Unavailable(description: "pg_ctl stop failed: \(stop.stderrText)") }
        let deadline = Date().addingTimeInterval(10)
        while server.status == nil, Date() < deadline { usleep(10_000) }
        usleep(UInt32(down.components.seconds) * 1_000_000 + UInt32(down.components.attoseconds / 1_000_000_000_000))
        let started = try Self.launch(binaries: binaries, directory: directory, port: port, runAsUser: runAsUser)
        process.withLock { $0 = started }
        guard waitUntilReady() else {
            throw Unavailable(description: "PostgreSQL did not come back: \(started.errorOutput.suffix(2_000))")
        }
    }

    /// Runs `postgres` in the foreground on `port` with the test settings.
    private static func launch(binaries: String, directory: String, port: Int, runAsUser: String?) throws
        -> BackgroundProcess
    {
        let settings = [
            "listen_addresses=127.0.0.1", "port=\(port)", "unix_socket_directories=\(directory)", "fsync=off",
            "synchronous_commit=off", "full_page_writes=off", "max_connections=300", "shared_buffers=32MB",
            "log_min_messages=warning",
        ]
        let program = "\(binaries)/postgres"
        let arguments = ["-D", "\(directory)/data"] + settings.flatMap { ["-c", $0] }
        return try runAsUser.map { try BackgroundProcess("runuser", ["-u", $0, "--", program] + arguments) }
            ?? BackgroundProcess(program, arguments)
    }

    // MARK: - The shared server

    private static let sharedServer = Task<LocalPostgres, any Error> {
        // initdb and the wait for the server take seconds: on a thread of their own, not the concurrency pool's.
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(
                    with: Result {
                        let server = try LocalPostgres.start()
                        LocalPostgres.registerForExit(server)
                        return server
                    }
                )
            }
        }
    }

    /// The test process's server, started on first use and stopped when the process exits.
    /// - Throws: ``Unavailable`` when PostgreSQL is not installed or does not start (with its log).
    public static func shared() async throws -> LocalPostgres {
        try await sharedServer.value
    }

    nonisolated(unsafe) private static var serverToStopAtExit: LocalPostgres?  // written once, before atexit runs

    private static func registerForExit(_ server: LocalPostgres) {
        serverToStopAtExit = server
        atexit {
            LocalPostgres.serverToStopAtExit?.stop()
        }
    }

    // MARK: - Starting and stopping

    /// Finds the newest installed PostgreSQL (15 on Debian 12).
    public static func findBinaries() throws -> String {
        if let configured = ProcessInfo.processInfo.environment["BEMYEARS_PG_BIN"] {
            return configured
        }
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [])
            .compactMap(Int.init).sorted(by: >)
        for version in versions where FileManager.default.isExecutableFile(atPath: "\(root)/\(version)/bin/initdb") {
            return "\(root)/\(version)/bin"
        }
        throw Unavailable(
            description: "PostgreSQL is not installed (no \(root)/<version>/bin/initdb). Install it with "
                + "`apt-get install postgresql` (Debian 12: PostgreSQL 15), or run `make test`, which installs it."
        )
    }

    /// Starts a new server (the caller stops it with ``stop()``), blocking the calling thread: call it outside the
    /// concurrency pool.
    private static func start() throws -> LocalPostgres {
        let binaries = try findBinaries()
        removeServersOfDeadProcesses(binaries: binaries)
        var runAsUser: String?
        if getuid() == 0 {
            guard getpwnam("postgres") != nil else {
                throw Unavailable(
                    description: "Running as root, PostgreSQL must run as the `postgres` user, which does not exist: "
                        + "install Debian's `postgresql` package (it creates the user)."
                )
            }
            runAsUser = "postgres"
        }
        // A short path: a Unix socket path is limited to 107 bytes.
        var template = Array("/tmp/bme-pg-XXXXXX".utf8CString)
        guard let created = mkdtemp(&template) else {
            let reason = String(cString: strerror(errno))
            throw Unavailable(description: "Cannot create a temporary directory in /tmp: \(reason)")
        }
        let directory = String(cString: created)
        // Who owns this server: a later run stops it if this process dies without its exit handler (a crash).
        try? "\(getpid())\n".write(toFile: "/tmp/\(ownerFile(directory))", atomically: true, encoding: .utf8)
        if let runAsUser {
            let chown = try Subprocess.runBlocking("/bin/chown", ["\(runAsUser):", directory])
            guard chown.status == 0 else {
                throw Unavailable(description: "chown \(runAsUser) \(directory) failed: \(chown.stderrText)")
            }
        }
        let initdb = try run(
            runAsUser,
            "\(binaries)/initdb",
            ["-D", "\(directory)/data", "-U", "postgres", "--auth=trust", "--no-locale", "-E", "UTF8", "--no-sync"]
        )
        guard initdb.status == 0 else {
            try? FileManager.default.removeItem(atPath: directory)
            throw Unavailable(description: "initdb failed (\(initdb.status)): \(initdb.stderrText)\(initdb.stdoutText)")
        }
        var lastFailure = ""
        for _ in 0..<8 {
            let port = Int.random(in: 20_000..<60_000)
            let server = try launch(binaries: binaries, directory: directory, port: port, runAsUser: runAsUser)
            let postgres = LocalPostgres(
                binaries: binaries,
                directory: directory,
                port: port,
                runAsUser: runAsUser,
                server: server
            )
            if postgres.waitUntilReady() { return postgres }
            postgres.stop(removing: false)
            lastFailure = server.errorOutput
            if !lastFailure.contains("in use") { break }  // only a taken port is worth another try
        }
        try? FileManager.default.removeItem(atPath: directory)
        throw Unavailable(description: "PostgreSQL did not start: \(lastFailure.suffix(2_000))")
    }

    /// The file next to a server's directory naming the test process that owns it.
    private static func ownerFile(_ directory: String) -> String {
        "\(URL(fileURLWithPath: directory).lastPathComponent).owner"
    }

    /// Stops and removes servers left behind by test processes that died without stopping them.
    private static func removeServersOfDeadProcesses(binaries: String) {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/tmp")) ?? []
        for entry in entries where entry.hasPrefix("bme-pg-") && entry.hasSuffix(".owner") {
            let owner = "/tmp/\(entry)"
            guard let text = try? String(contentsOfFile: owner, encoding: .utf8),
                let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)),
                kill(pid, 0) != 0, errno == ESRCH
            else { continue }
            let directory = String(owner.dropLast(".owner".count))
            let user: String? = getuid() == 0 ? "postgres" : nil
            if FileManager.default.fileExists(atPath: "\(directory)/data/postmaster.pid") {
                _ = try? run(user, "\(binaries)/pg_ctl", ["-D", "\(directory)/data", "-m", "immediate", "-w", "stop"])
            }
            try? FileManager.default.removeItem(atPath: directory)
            try? FileManager.default.removeItem(atPath: owner)
        }
    }

    /// Polls `pg_isready` until the server accepts connections (false if it exited or 120 s passed: start-up on a
    /// loaded machine is slow, and a server that fails exits at once).
    private func waitUntilReady() -> Bool {
        let deadline = Date().addingTimeInterval(120)
        while Date() < deadline, server.status == nil {
            let probe = try? Subprocess.runBlocking(
                "\(binaries)/pg_isready",
                ["-q", "-h", directory, "-p", "\(port)", "-U", "postgres", "-d", "postgres"]
            )
            if probe?.status == 0 { return true }
            usleep(100_000)
        }
        return false
    }

    /// Stops the server at once and removes its directory (blocking: from the exit handler).
    private func stop() {
        stop(removing: true)
    }

    private func stop(removing: Bool) {
        if server.status == nil {
            let arguments = ["-D", "\(directory)/data", "-m", "immediate", "-w", "stop"]
            _ = try? Self.run(runAsUser, "\(binaries)/pg_ctl", arguments)
        }
        let deadline = Date().addingTimeInterval(10)
        while server.status == nil, Date() < deadline { usleep(10_000) }
        if server.status == nil { kill(server.processIdentifier, SIGKILL) }
        if removing {
            try? FileManager.default.removeItem(atPath: directory)
            try? FileManager.default.removeItem(atPath: "/tmp/\(Self.ownerFile(directory))")
        }
    }

    // MARK: - Databases

    /// Creates a fresh, empty database named after `prefix` plus a random suffix.
    public func createDatabase(_ prefix: String = "test") async throws -> Database {
        let safe = prefix.lowercased().filter { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
        let name = "db_\(safe.prefix(40))_\(String(UInt32.random(in: 0..<UInt32.max), radix: 16))"
        try await psql("CREATE DATABASE \(name) TEMPLATE template0 ENCODING 'UTF8'")
        let socketDirectory = directory.replacingOccurrences(of: "/", with: "%2F")
        return Database(
            name: name,
            tcpURL: "postgres://postgres@127.0.0.1:\(port)/\(name)?sslmode=disable",
            socketURL: "postgres://postgres@\(socketDirectory):\(port)/\(name)"
        )
    }

    /// Runs SQL with `psql` over the socket; throws with psql's message when it fails.
    @discardableResult
    public func psql(_ sql: String, database: String = "postgres") async throws -> String {
        let result = try await Subprocess.run(
            "\(binaries)/psql",
            [
                "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", directory, "-p", "\(port)", "-U", "postgres",
                "-d", database, "-c", sql,
            ]
        )
        guard result.status == 0 else {
            throw Unavailable(description: "psql failed (\(result.status)) on \(sql.prefix(80)): \(result.stderrText)")
        }
        return result.stdoutText
    }

    private static func run(_ user: String?, _ program: String, _ arguments: [String]) throws -> Subprocess.Result {
        guard let user else { return try Subprocess.runBlocking(program, arguments) }
        return try Subprocess.runBlocking("runuser", ["-u", user, "--", program] + arguments)
    }
}
