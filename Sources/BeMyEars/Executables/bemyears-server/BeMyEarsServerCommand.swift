import ArgumentParser
import BeMyEarsCore
import BeMyEarsServer
import Foundation

/// `bemyears-server`: argument parsing only; the server is `BeMyEarsServer.buildApplication(_:)`.
@main
struct BeMyEarsServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bemyears-server",
        abstract: "BeMyEars signaling server: WebSocket at /ws, the browser client at /, GET /health.",
        discussion: """
            Demo on one machine: bemyears-server --port 8080 --with-turn, then open http://localhost:8080/ in two \
            browsers (camera access needs https or localhost). Stop with Ctrl-C.
            """
    )

    @Option(help: "Address to listen on (0.0.0.0: every interface).")
    var host = "127.0.0.1"

    @Option(help: "Port to listen on (0: any free port; see --json).")
    var port = 8080

    @Option(help: "Where signaling state lives: \(StoreLocation.syntax).")
    var store = "memory"

    @Option(help: "Shared secret of a coturn with use-auth-secret: REGISTERED then carries TURN credentials.")
    var turnSecret: String?

    @Option(help: "The TURN server for --turn-secret, e.g. turn:turn.example.org:3478.")
    var turnUrl: String?

    @Flag(help: "Start a private coturn (Debian package coturn) for the demo; stopped on exit.")
    var withTurn = false

    @Option(help: .hidden)
    var turnPort: Int?

    @Option(help: "Seconds each TURN credential stays valid (default 24 h).")
    var turnTtl = 86_400

    @Flag(help: "Print one JSON object per line on stdout ({\"event\":\"ready\",\"port\":…} once listening).")
    var json = false

    @Option(help: "This process's name among several sharing a PostgreSQL store (default: random).")
    var nodeId: String?

    @Flag(help: "Do not advertise _bemyears._tcp over mDNS.")
    var noBonjour = false

    func validate() throws {
        guard (0...65_535).contains(port) else {
            throw ValidationError("--port must be 0...65535 (0 picks a free port)")
        }
        if withTurn, turnSecret != nil {
            throw ValidationError("--with-turn starts its own coturn with a random secret: drop --turn-secret")
        }
        if turnSecret != nil, turnUrl == nil {
            throw ValidationError("--turn-secret needs --turn-url turn:HOST:PORT (the coturn that shares the secret)")
        }
        if turnUrl != nil, turnSecret == nil, !withTurn {
            throw ValidationError("--turn-url needs --turn-secret S (coturn's static-auth-secret), or use --with-turn")
        }
        if let turnUrl, !(turnUrl.hasPrefix("turn:") || turnUrl.hasPrefix("turns:")) {
            throw ValidationError("--turn-url must look like turn:HOST:PORT or turns:HOST:PORT")
        }
        guard turnTtl >= 60 else {
            throw ValidationError("--turn-ttl must be at least 60 seconds (it should outlast the longest call)")
        }
        do {
            _ = try StoreLocation(parsing: store)
        } catch {
            throw ValidationError(error.description)
        }
    }

    func run() async throws {
        let logger = SignalingLogHandler.logger()
        let location = try StoreLocation(parsing: store)
        let signalingStore: any SignalingStore
        let node: NodeID
        var cluster: (any SignalingCluster)?
        var storeRuntime: (any SignalingStoreRuntime)?
        switch location {
        case .memory:
            signalingStore = InMemorySignalingStore()
            node = nodeId.map(NodeID.init) ?? .local
        case .postgres(let url):
            // A fresh identity per start unless given: two live processes must never share one.
            node = NodeID(
                nodeId ?? "\(ProcessInfo.processInfo.hostName.prefix(60))-\(UInt32.random(in: 0...UInt32.max))")
            let backend = try PostgresBackend(url: url, node: node, logger: logger)
            signalingStore = backend.store
            cluster = backend.cluster
            storeRuntime = backend.runtime
        }

        var turnServer: LocalTURNServer?
        var turn: TURNCredentials?
        let lifetime = Duration.seconds(turnTtl)
        if withTurn {
            let server = try await LocalTURNServer.start(
                listeningHost: host,
                advertisedHost: turnUrl.flatMap(Self.host(ofTURNURL:)),
                port: turnPort,
                logger: logger
            )
            turnServer = server
            turn = server.credentials(lifetime: lifetime)
        } else if let turnSecret, let turnUrl {
            turn = TURNCredentials(url: turnUrl, secret: turnSecret, lifetime: lifetime)
        }

        let json = json
        let host = host
        let configuration = BeMyEarsServerConfiguration(
            host: host,
            port: port,
            node: node,
            store: signalingStore,
            cluster: cluster,
            storeRuntime: storeRuntime,
            turn: turn,
            advertisesService: !noBonjour,
            logger: logger,
            onReady: { port in
                let shownHost = host == "0.0.0.0" ? "127.0.0.1" : host
                if json {
                    Self.emit([
                        "event": .string("ready"), "port": .number(port),
                        "url": .string("http://\(shownHost):\(port)/"),
                    ])
                } else {
                    Self.emit(line: "BeMyEars is ready: open http://\(shownHost):\(port)/ in two browsers")
                }
            }
        )
        do {
            try await runServer(configuration)
        } catch {
            await turnServer?.stop()
            if let explained = ServerStartupError.explaining(error, host: host, port: port) {
                throw explained
            }
            throw error
        }
        await turnServer?.stop()
        if json {
            Self.emit(["event": .string("stopped")])
        }
    }

    /// `turn:HOST:PORT[?…]` → HOST.
    static func host(ofTURNURL url: String) -> String? {
        guard let colon = url.firstIndex(of: ":") else { return nil }
        let rest = url[url.index(after: colon)...].split(separator: "?").first ?? ""
        guard let last = rest.lastIndex(of: ":") else { return String(rest) }
        return String(rest[..<last])
    }

    private enum JSONField {
        case string(String)
        case number(Int)
    }

    /// One JSON object on stdout, flushed (tests and scripts read it line by line).
    private static func emit(_ fields: KeyValuePairs<String, JSONField>) {
        let members = fields.map { key, value -> String in
            switch value {
            case .string(let text):
                "\"\(key)\":\"\(text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\""))\""
            case .number(let number): "\"\(key)\":\(number)"
            }
        }
        emit(line: "{" + members.joined(separator: ",") + "}")
    }

    private static func emit(line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}
