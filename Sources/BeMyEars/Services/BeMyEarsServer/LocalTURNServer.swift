import Foundation
public import Logging
import NIOCore
import NIOPosix
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A private coturn (`turnserver`, Debian package coturn) for the demo and the tests: TURN REST credentials
/// (`use-auth-secret` with a random secret), UDP and TCP on one port, no TLS/DTLS, no CLI.
///
/// It relays to public addresses only, besides what ``TURNPeerPolicy`` allows: the ranges the operator names and, on
/// a loopback address, 127.0.0.1 (both browsers on one machine relay to it). Anything else private, loopback or
/// link-local is refused with 403 Forbidden IP, so the relay cannot be used to reach this machine's or this
/// network's services. The configuration, database and log live in a private temporary directory (mode 0700: the
/// secret is never on a command line), removed by ``stop()``.
public final class LocalTURNServer: Sendable {
    /// The `turn:` URL clients use, e.g. `turn:127.0.0.1:3478`.
    public let url: String
    /// The shared secret (`static-auth-secret`).
    public let secret: String
    /// The port coturn listens on (UDP and TCP).
    public let port: Int
    /// It listens on loopback and relays to 127.0.0.1 (a one-machine demo).
    public let relaysToLoopback: Bool
    private let process: ProcessBox
    private let directory: URL

    private init(url: String, secret: String, port: Int, loopback: Bool, process: ProcessBox, directory: URL) {
        self.url = url
        self.secret = secret
        self.port = port
        self.relaysToLoopback = loopback
        self.process = process
        self.directory = directory
    }

    /// The credentials the signaling server hands out for this TURN server.
    public func credentials(lifetime: Duration = .seconds(ServerOptions.defaultTURNTTL)) -> TURNCredentials {
        TURNCredentials(url: url, secret: secret, lifetime: lifetime)
    }

    /// Starts coturn and waits until it accepts TCP connections.
    ///
    /// - Parameters:
    ///   - listeningHost: The address to listen and relay on: an IP address, or `0.0.0.0` for every interface.
    ///   - advertisedHost: The host put in the `turn:` URL (clients must reach it); default: `listeningHost`, or
    ///     127.0.0.1 when that is `0.0.0.0`.
    ///   - port: The TURN port; nil: 3478 if free, else any free port.
    ///   - allowedPeers: Addresses or CIDR ranges the relay may reach although private (`--turn-allow-peer`).
    ///   - executable: coturn's server binary.
    /// - Throws: ``ServerStartupError`` saying what to install or change.
    public static func start(
        listeningHost: String = "127.0.0.1",
        advertisedHost: String? = nil,
        port requested: Int? = nil,
        allowedPeers: [String] = [],
        executable: String = "/usr/bin/turnserver",
        logger: Logger? = nil
    ) async throws -> LocalTURNServer {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw ServerStartupError(
                "\(executable) is missing: install coturn (`apt-get install coturn`), or run without --with-turn"
            )
        }
        let listenAll = listeningHost == "0.0.0.0" || listeningHost == "::"
        let isLoopback = listeningHost == "127.0.0.1" || listeningHost == "localhost" || listeningHost == "::1"
        let bindHost = listeningHost == "localhost" ? "127.0.0.1" : listeningHost
        let peers = try TURNPeerPolicy(allowing: allowedPeers, loopback: isLoopback)
        let port: Int
        if let requested {
            port = requested
        } else {
            port = try await Self.freePort(preferring: 3478, host: listenAll ? "0.0.0.0" : bindHost)
        }
        let secret = Self.randomSecret()
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("bemyears-turn-\(UUID().uuidString.prefix(8))", isDirectory: true)
        try FileManager.default.createDirectory(
            at: directory,
            withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700]
        )
        var lines = [
            "listening-port=\(port)",
            "realm=bemyears",
            "use-auth-secret",
            "static-auth-secret=\(secret)",
            "fingerprint",
            "no-tls",
            "no-dtls",
            "no-cli",
            "no-multicast-peers",
            "no-software-attribute",
            "userdb=\(directory.appendingPathComponent("turndb").path)",
            "pidfile=\(directory.appendingPathComponent("turnserver.pid").path)",
            "log-file=\(directory.appendingPathComponent("turn.log").path)",
            "simple-log",
        ]
        if !listenAll {
            lines += ["listening-ip=\(bindHost)", "relay-ip=\(bindHost)"]
        }
        lines += peers.configurationLines
        let configFile = directory.appendingPathComponent("turnserver.conf")
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: configFile)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: configFile.path)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["-c", configFile.path]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw ServerStartupError("cannot start \(executable): \(error.localizedDescription)")
        }
        let box = ProcessBox(process)
        let host = advertisedHost ?? (listenAll ? "127.0.0.1" : bindHost)
        let server = LocalTURNServer(
            url: "turn:\(Self.urlHost(host)):\(port)",
            secret: secret,
            port: port,
            loopback: isLoopback,
            process: box,
            directory: directory
        )
        let probeHost = listenAll ? "127.0.0.1" : bindHost
        // Generous: coturn exits at once when it cannot start, and a loaded machine is slow to start it.
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if !process.isRunning {
                let log = (try? String(contentsOf: directory.appendingPathComponent("turn.log"), encoding: .utf8)) ?? ""
                try? FileManager.default.removeItem(at: directory)
                throw ServerStartupError(
                    "coturn exited at start (status \(process.terminationStatus)); its log ends: "
                        + log.split(separator: "\n").suffix(3).joined(separator: " | ")
                )
            }
            if await Self.acceptsTCP(host: probeHost, port: port) {
                logger?.info("event=turn_started port=\(port)")
                return server
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        await server.stop()
        throw ServerStartupError("coturn did not start listening on port \(port) within 30 s")
    }

    /// Stops coturn (SIGTERM, then SIGKILL after 2 s) and removes its directory. Idempotent.
    public func stop() async {
        await process.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    // MARK: - Helpers

    private static func urlHost(_ host: String) -> String {
        host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
    }

    private static func randomSecret() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    /// `preferred` if both its TCP and UDP ports are free on `host`, else a port the kernel picks.
    static func freePort(preferring preferred: Int, host: String) async throws -> Int {
        if await bind(port: preferred, host: host, tcp: true) != nil,
            await bind(port: preferred, host: host, tcp: false) != nil
        {
            return preferred
        }
        for _ in 0..<20 {
            if let port = await bind(port: 0, host: host, tcp: true),
                await bind(port: port, host: host, tcp: false) != nil
            {
                return port
            }
        }
        throw ServerStartupError("no free port for coturn on \(host)")
    }

    /// Binds a TCP or UDP socket to `host:port` (an IP address) and releases it; returns the bound port, or nil when
    /// it is taken.
    private static func bind(port: Int, host: String, tcp: Bool) async -> Int? {
        guard let address = try? SocketAddress(ipAddress: host, port: port) else { return nil }
        let group = MultiThreadedEventLoopGroup.singleton
        let channel: any Channel
        do {
            if tcp {
                channel = try await ServerBootstrap(group: group).bind(to: address).get()
            } else {
                channel = try await DatagramBootstrap(group: group).bind(to: address).get()
            }
        } catch {
            return nil
        }
        let bound = channel.localAddress?.port
        try? await channel.close().get()
        return bound
    }

    /// Whether a TCP connection to `host:port` (an IP address) succeeds.
    private static func acceptsTCP(host: String, port: Int) async -> Bool {
        guard let address = try? SocketAddress(ipAddress: host, port: port) else { return false }
        do {
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(.seconds(2))
                .connect(to: address).get()
            try? await channel.close().get()
            return true
        } catch {
            return false
        }
    }
}

/// The coturn process.
private final class ProcessBox: @unchecked Sendable {
    // Safe: `process` is only started (before this box exists) and signalled; Foundation's Process is thread-safe
    // for isRunning/terminate/processIdentifier.
    private let process: Process

    init(_ process: Process) {
        self.process = process
    }

    func stop() async {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = ContinuousClock.now + .seconds(2)
        while process.isRunning, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
        }
    }
}
