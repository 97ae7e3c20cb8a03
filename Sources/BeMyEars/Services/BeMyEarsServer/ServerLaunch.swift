import BeMyEarsCore
import CanonicalJSON
import ConnectionGuard
import DeviceIdentityStore
import Foundation
import Logging

/// What `bemyears-server` was asked for, checked and run here so the executable only parses arguments.
public struct ServerOptions: Sendable, Hashable {
    public var host = "127.0.0.1"
    public var port = 8080
    /// ``StoreLocation`` syntax: `memory` or a PostgreSQL URL.
    public var store = "memory"
    public var turnSecret: String?
    public var turnURL: String?
    /// Start a private coturn for the demo.
    public var withTURN = false
    public var turnPort: Int?
    /// Seconds each TURN credential stays valid: the longest call plus a margin (3 h + 10 min). coturn checks it on
    /// every allocation refresh, so a relayed call longer than this needs an ICE restart with fresh credentials
    /// (`ICE_SERVERS`), which the browser client does.
    public var turnTTL = ServerOptions.defaultTURNTTL
    /// The longest call (3 h) plus 10 minutes.
    public static let defaultTURNTTL = 3 * 3600 + 600
    /// Connections one address may hold open at once (`--max-connections-per-address`; raise it for many users
    /// behind one NAT).
    public var maximumConnectionsPerAddress = 64
    /// Messages each socket may send per second, in bursts of twice that (`--rate-limit`; the protocol's 50).
    public var rateLimit = 50
    /// Private addresses or CIDR ranges the coturn of `--with-turn` may relay to (`--turn-allow-peer`).
    public var turnAllowedPeers: [String] = []
    /// One JSON object per line on stdout.
    public var json = false
    public var nodeId: String?
    /// Advertise `_bemyears._tcp` over mDNS.
    public var advertisesService = true
    /// Web origins besides the server's own whose pages may open `/ws` (`--allowed-origin`).
    public var allowedOrigins: [String] = []
    /// A file holding the TURN secret (`--turn-secret-file`): unlike `--turn-secret`, not visible in the process
    /// list.
    public var turnSecretFile: String?
    /// A file holding the PostgreSQL password (`--store-password-file`), for a `--store` URL without one.
    public var storePasswordFile: String?

    public init() {}

    /// Why the options cannot work, in a sentence that says what to pass instead.
    public struct Invalid: Error, Sendable, Hashable, CustomStringConvertible {
        public var description: String

        public init(description: String) {
            self.description = description
        }
    }

    /// Checks the options before anything starts.
    ///
    /// - Throws: ``Invalid`` naming the option and what it needs.
    public func validate() throws(Invalid) {
        guard (0...65_535).contains(port) else {
            throw Invalid(description: "--port must be 0...65535 (0 picks a free port)")
        }
        if withTURN, turnSecret != nil {
            throw Invalid(description: "--with-turn starts its own coturn with a random secret: drop --turn-secret")
        }
        if turnSecret != nil || turnSecretFile != nil, turnURL == nil {
            throw Invalid(
                description: "--turn-secret needs --turn-url turn:HOST:PORT (the coturn that shares the secret)")
        }
        if turnURL != nil, turnSecret == nil, turnSecretFile == nil, !withTURN {
            throw Invalid(
                description: "--turn-url needs --turn-secret S (coturn's static-auth-secret), or use --with-turn")
        }
        if let turnURL, !(turnURL.hasPrefix("turn:") || turnURL.hasPrefix("turns:")) {
            throw Invalid(description: "--turn-url must look like turn:HOST:PORT or turns:HOST:PORT")
        }
        guard turnTTL >= 60 else {
            throw Invalid(description: "--turn-ttl must be at least 60 seconds (it should outlast the longest call)")
        }
        guard maximumConnectionsPerAddress >= 1 else {
            throw Invalid(description: "--max-connections-per-address must be at least 1")
        }
        guard (1...1_000_000).contains(rateLimit) else {
            throw Invalid(description: "--rate-limit must be from 1 to 1000000 messages per second")
        }
        if !turnAllowedPeers.isEmpty {
            guard withTURN else {
                throw Invalid(
                    description: "--turn-allow-peer configures the coturn that --with-turn starts; for your own "
                        + "coturn, add allowed-peer-ip lines to its configuration")
            }
            _ = try TURNPeerPolicy(allowing: turnAllowedPeers, loopback: false)
        }
        if turnSecretFile != nil, turnSecret != nil || withTURN {
            throw Invalid(description: "--turn-secret-file replaces --turn-secret (and --with-turn makes its own)")
        }
        do {
            _ = try StoreLocation(parsing: store)
            _ = try OriginPolicy(allowing: allowedOrigins)
        } catch {
            throw Invalid(description: error.description)
        }
    }

    /// The TURN secret: from ``turnSecretFile`` (trimmed; the file must be readable by its owner only) or
    /// ``turnSecret``.
    func resolvedTURNSecret() throws -> String? {
        guard let turnSecretFile else { return turnSecret }
        return try Self.secret(inFile: turnSecretFile, option: "--turn-secret-file")
    }

    /// A secret kept in a file (``SecretFile``: refused while others may read it): its first line.
    static func secret(inFile path: String, option: String) throws -> String {
        let text: String?
        do {
            text = try SecretFile.load(URL(fileURLWithPath: path))
        } catch {
            throw ServerStartupError("\(option) \(error)")
        }
        guard let text else { throw ServerStartupError("\(option) \(path): no such file") }
        guard let line = text.split(whereSeparator: \.isNewline).first.map(String.init), !line.isEmpty else {
            throw ServerStartupError("\(option) \(path) is empty: put the secret on its first line")
        }
        return line
    }

    /// `turn:HOST:PORT[?…]` → HOST.
    public static func host(ofTURNURL url: String) -> String? {
        guard let colon = url.firstIndex(of: ":") else { return nil }
        let rest = url[url.index(after: colon)...].split(separator: "?").first ?? ""
        guard let last = rest.lastIndex(of: ":") else { return String(rest) }
        return String(rest[..<last])
    }
}

/// Runs the server for ``ServerOptions``: the store (memory or PostgreSQL), TURN (a private coturn or a shared
/// secret), the server until it is stopped (SIGINT/SIGTERM), and the lines people and scripts read.
public enum ServerLaunch {
    /// The lines `output` gets: `BeMyEars is ready: …` or `{"event":"ready","port":…,"url":…}` once listening,
    /// and with `json` `{"event":"stopped"}` at the end.
    public static func run(_ options: ServerOptions, output: @escaping @Sendable (String) -> Void) async throws {
        let logger = SignalingLogHandler.logger()
        if options.turnSecret != nil {
            logger.warning(
                "--turn-secret is visible to every user of this machine (the process list): use --turn-secret-file")
        }
        if URLComponents(string: options.store)?.password != nil {
            logger.warning(
                "the --store URL holds a password, visible to every user of this machine (the process list): use PGPASSWORD or --store-password-file"
            )
        }
        let location = try StoreLocation(parsing: options.store)
        let signalingStore: any SignalingStore
        let node: NodeID
        var cluster: (any SignalingCluster)?
        var storeRuntime: (any SignalingStoreRuntime)?
        switch location {
        case .memory:
            signalingStore = InMemorySignalingStore()
            node = options.nodeId.map(NodeID.init) ?? .local
        case .postgres(let url):
            // A fresh identity per start unless given: two live processes must never share one.
            node = NodeID(
                options.nodeId
                    ?? "\(ProcessInfo.processInfo.hostName.prefix(60))-\(UInt32.random(in: 0...UInt32.max))")
            let password = try options.storePasswordFile.map {
                try ServerOptions.secret(inFile: $0, option: "--store-password-file")
            }
            let backend = try PostgresBackend(url: url, password: password, node: node, logger: logger)
            signalingStore = backend.store
            cluster = backend.cluster
            storeRuntime = backend.runtime
        }

        var turnServer: LocalTURNServer?
        var turn: TURNCredentials?
        let lifetime = Duration.seconds(options.turnTTL)
        if options.withTURN {
            let server = try await LocalTURNServer.start(
                listeningHost: options.host,
                advertisedHost: options.turnURL.flatMap(ServerOptions.host(ofTURNURL:)),
                port: options.turnPort,
                allowedPeers: options.turnAllowedPeers,
                logger: logger
            )
            turnServer = server
            turn = server.credentials(lifetime: lifetime)
            if !server.relaysToLoopback, options.turnAllowedPeers.isEmpty {
                logger.notice(
                    """
                    event=turn_public_peers_only (the relay reaches public addresses only; to relay within this \
                    network pass --turn-allow-peer with its range, e.g. 192.168.1.0/24)
                    """)
            }
        } else if let turnSecret = try options.resolvedTURNSecret(), let turnURL = options.turnURL {
            turn = TURNCredentials(url: turnURL, secret: turnSecret, lifetime: lifetime)
        }

        let json = options.json
        let host = options.host
        var configuration = BeMyEarsServerConfiguration(
            host: host,
            port: options.port,
            node: node,
            store: signalingStore,
            cluster: cluster,
            storeRuntime: storeRuntime,
            turn: turn,
            advertisesService: options.advertisesService,
            logger: logger,
            onReady: { port in
                let shownHost = host == "0.0.0.0" ? "127.0.0.1" : host
                let url = "http://\(shownHost):\(port)/"
                output(
                    json
                        ? JSONValue.object(["event": "ready", "port": .number(Double(port)), "url": .string(url)])
                            .canonicalString
                        : "BeMyEars is ready: open \(url) in two browsers")
            }
        )
        configuration.origins = try OriginPolicy(allowing: options.allowedOrigins)
        configuration.connectionLimits.connectionsPerAddress = options.maximumConnectionsPerAddress
        configuration.signaling.rateLimit = RateLimit(
            messagesPerSecond: Double(options.rateLimit), burst: 2 * options.rateLimit)
        do {
            try await runServer(configuration)
        } catch {
            await turnServer?.stop()
            if let explained = ServerStartupError.explaining(error, host: host, port: options.port) {
                throw explained
            }
            throw error
        }
        await turnServer?.stop()
        if json {
            output(JSONValue.object(["event": "stopped"]).canonicalString)
        }
    }
}
