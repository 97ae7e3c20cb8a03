import ArgumentParser
import ArgusHub
import Foundation

/// `argus-hub`: argument parsing only; every command is a function of `HubLaunch` in ArgusHub.
@main
struct ArgusHubCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "argus-hub",
        abstract: "Argus: a home camera hub with a mobile API (pairing codes, tokens, events, cameras, push).",
        discussion: """
            Example: argus-hub --port 8443 --data-dir /tmp/argus (HTTPS with the hub's own certificate), then on \
            the same machine `argus-hub pair --data-dir /tmp/argus` for a code the app exchanges for tokens, with \
            the certificate fingerprint it pins. The API is docs/api/mobile-api.yaml.
            """,
        version: ArgusVersion.current,
        subcommands: [Serve.self, Pair.self, Devices.self],
        defaultSubcommand: Serve.self
    )
}

struct DataOptions: ParsableArguments {
    @Option(help: "Where the hub keeps its database and keys (default: $XDG_DATA_HOME/argus).")
    var dataDir: String?

    var url: URL { HubLaunch.dataDirectory(dataDir) }
}

/// Runs `body`, turning the hub's refusals into a usage error (exit 64) with its words.
func owner<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as HubError {
        throw ValidationError(error.description)
    }
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Serve the mobile API (the default).")

    @OptionGroup var data: DataOptions

    @Option(help: "Address to listen on (default: every interface; 127.0.0.1 with --http).")
    var host: String?

    @Flag(help: "Serve plain HTTP instead of HTTPS: loopback only (tests, tools on this machine).")
    var http = false

    @Option(help: "Port to listen on (0: any free port; see --json).")
    var port = 8443

    @Option(
        name: .customLong("camera"),
        help: "A camera to watch: [NAME=]test|v4l2[:DEVICE]|file:PATH (repeatable); its motion becomes events.")
    var cameras: [String] = []

    @Option(help: "Seconds between two motion events of one camera.")
    var motionCooldown: Double = 30

    @Option(help: "Push through APNs: the .p8 key file (0600) from Apple's developer site.")
    var apnsKey: String?

    @Option(help: "The .p8 key's 10-character Key ID.")
    var apnsKeyId: String?

    @Option(help: "The 10-character Team ID.")
    var apnsTeamId: String?

    @Option(help: "The app's bundle id (apns-topic).")
    var apnsTopic: String?

    @Option(help: "production (default), sandbox, or an https:// URL.")
    var apnsServer: String?

    @Option(help: "PEM certificates to trust for --apns-server instead of the system's (a private server).")
    var apnsTrust: String?

    @Option(help: "The hub's name on the LAN (Bonjour _argus._tcp; default: Argus on HOSTNAME).")
    var name: String?

    @Flag(help: "Do not announce the hub on the LAN (Bonjour).")
    var noBonjour = false

    @Flag(help: "Print one JSON object per line on stdout ({\"event\":\"ready\",\"port\":…} once listening).")
    var json = false

    func run() async throws {
        var configuration = HubConfiguration(dataDirectory: data.url)
        configuration.advertises = !noBonjour
        if let name {
            guard (1...63).contains(name.utf8.count) else { throw ValidationError("--name is 1 to 63 bytes.") }
            configuration.serviceName = name
        }
        configuration.push = try owner {
            try HubLaunch.push(
                key: apnsKey, keyId: apnsKeyId, teamId: apnsTeamId, topic: apnsTopic, server: apnsServer,
                trust: apnsTrust)
        }
        configuration.cameraSpecs = try owner { try cameras.map(CameraSpec.init(parsing:)) }
        guard (1...86_400).contains(motionCooldown) else {
            throw ValidationError("--motion-cooldown is 1 to 86400 seconds.")
        }
        configuration.motionCooldown = motionCooldown
        configuration.host = host ?? (http ? "127.0.0.1" : "0.0.0.0")
        configuration.plainHTTP = http
        configuration.port = port
        if let problem = configuration.problem { throw ValidationError(problem) }
        do {
            try await HubLaunch.serve(configuration, json: json)
        } catch let error as HubError {
            throw ValidationError(error.description)
        }
    }
}

struct Pair: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make a pairing code (6 digits, 5 minutes, single use) for a phone to type in.")

    @OptionGroup var data: DataOptions

    @Flag(help: "Print {\"pairing_code\",\"expires_at\",\"expires_in_seconds\",\"cert_fingerprint\"} instead of text.")
    var json = false

    @Option(help: "Also show a QR code for the app to scan: HOST:PORT, the address a phone reaches the hub at.")
    var qrAddress: String?

    func run() async throws {
        for line in try owner({ try HubLaunch.pair(data.url, json: json, qrAddress: qrAddress) }) { print(line) }
    }
}

struct Devices: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The paired devices.", subcommands: [List.self, Revoke.self], defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the paired devices.")

        @OptionGroup var data: DataOptions

        @Flag(help: "One JSON object per device.")
        var json = false

        func run() async throws {
            for line in try owner({ try HubLaunch.devices(data.url, json: json) }) { print(line) }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke a device: its tokens stop working at once, its push token is dropped.")

        @OptionGroup var data: DataOptions

        @Argument(help: "The device's id (or its first characters).")
        var device: String

        func run() async throws {
            print(try owner { try HubLaunch.revoke(data.url, device: device) })
        }
    }
}
