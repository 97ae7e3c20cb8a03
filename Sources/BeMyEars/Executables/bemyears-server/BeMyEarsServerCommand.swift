import ArgumentParser
import BeMyEarsServer
import Foundation

/// `bemyears-server`: argument parsing only; the server is `ServerLaunch.run(_:output:)` in BeMyEarsServer.
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

    @Option(
        help: """
            Shared secret of a coturn with use-auth-secret: REGISTERED then carries TURN credentials. Visible to \
            every user in the process list: prefer --turn-secret-file.
            """)
    var turnSecret: String?

    @Option(help: "A file (mode 0600) whose first line is the TURN shared secret.")
    var turnSecretFile: String?

    @Option(help: "A file (mode 0600) whose first line is the PostgreSQL password (or set PGPASSWORD).")
    var storePasswordFile: String?

    @Option(
        name: .customLong("allowed-origin"),
        help: "A web origin (scheme://host[:port]) whose pages may use /ws besides this server's own (repeatable).")
    var allowedOrigins: [String] = []

    @Option(help: "The TURN server for --turn-secret, e.g. turn:turn.example.org:3478.")
    var turnUrl: String?

    @Flag(help: "Start a private coturn (Debian package coturn) for the demo; stopped on exit.")
    var withTurn = false

    @Option(help: .hidden)
    var turnPort: Int?

    @Option(
        help: """
            Seconds each TURN credential stays valid: the longest call plus a margin (default 3 h 10 min; longer \
            calls renew them with an ICE restart).
            """)
    var turnTtl = ServerOptions.defaultTURNTTL

    @Option(
        name: .customLong("max-connections-per-address"),
        help: "Connections one address may hold open at once; raise it for many users behind one NAT.")
    var maximumConnectionsPerAddress = 64

    @Option(
        name: .customLong("rate-limit"),
        help: """
            Messages each socket may send per second, in bursts of twice that (BEMYEARS-PROTOCOL.md: 50); more are \
            answered RATE_LIMITED. Raise it only for load tests.
            """)
    var rateLimit = 50

    @Option(
        name: .customLong("turn-allow-peer"),
        help: """
            A private address or CIDR range (e.g. 192.168.1.0/24) the --with-turn relay may reach; by default it \
            relays to public addresses only (and 127.0.0.1 on loopback). Repeatable.
            """)
    var turnAllowedPeers: [String] = []

    @Flag(help: "Print one JSON object per line on stdout ({\"event\":\"ready\",\"port\":…} once listening).")
    var json = false

    @Option(help: "This process's name among several sharing a PostgreSQL store (default: random).")
    var nodeId: String?

    @Flag(help: "Do not advertise _bemyears._tcp over mDNS.")
    var noBonjour = false

    /// The options as the server takes them.
    var options: ServerOptions {
        var options = ServerOptions()
        options.host = host
        options.port = port
        options.store = store
        options.turnSecret = turnSecret
        options.turnSecretFile = turnSecretFile
        options.storePasswordFile = storePasswordFile
        options.allowedOrigins = allowedOrigins
        options.turnURL = turnUrl
        options.withTURN = withTurn
        options.turnPort = turnPort
        options.turnTTL = turnTtl
        options.turnAllowedPeers = turnAllowedPeers
        options.maximumConnectionsPerAddress = maximumConnectionsPerAddress
        options.rateLimit = rateLimit
        options.json = json
        options.nodeId = nodeId
        options.advertisesService = !noBonjour
        return options
    }

    func validate() throws {
        do {
            try options.validate()
        } catch {
            throw ValidationError(error.description)
        }
    }

    func run() async throws {
        try await ServerLaunch.run(options) { line in
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
        }
    }
}
