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
            the certificate fingerprint it pins. The API is docs/api/mobile-api.yaml. CribCall monitors paired \
            with `argus-hub monitors pair --qr TEXT` are cameras too.
            """,
        version: ArgusVersion.current,
        subcommands: [Serve.self, Pair.self, Devices.self, Monitors.self],
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

    @Option(
        name: .customLong("ice-address"),
        help: "Take the monitors' pictures over this local address only (repeatable; 127.0.0.1 for loopback).")
    var iceAddresses: [String] = []

    @Option(
        help: ArgumentHelp(
            "Serve the owner's page on this loopback port (0: any free port): pairing codes, devices, monitors.",
            valueName: "port"))
    var web: Int?

    @Flag(help: "Do not connect to the CribCall monitors paired with `argus-hub monitors pair`.")
    var noMonitors = false

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
        configuration.watchesMonitors = !noMonitors
        configuration.iceAddresses = iceAddresses
        configuration.ownerPagePort = web
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

struct Monitors: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The CribCall monitors the hub watches as cameras (the hub pairs with them as a listener).",
        subcommands: [Pair.self, List.self, Forget.self], defaultSubcommand: List.self)

    struct Pair: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Pair with a CribCall monitor: by its QR code (`cribcall monitor --qr`), or by its PIN.")

        @OptionGroup var data: DataOptions

        @Option(help: "The text of the monitor's QR code.")
        var qr: String?

        @Flag(help: "Pair with the PIN the monitor shows (with --monitor, or --address and --fingerprint).")
        var pin = false

        @Option(help: "The monitor's id or name, found on the LAN (with --pin).")
        var monitor: String?

        @Option(help: "HOST:PORT of the monitor (with --qr, HOST alone uses the QR code's port).")
        var address: String?

        @Option(help: "The monitor's certificate fingerprint, 64 hex characters (with --pin --address).")
        var fingerprint: String?

        @Option(help: "What to call the monitor (with --pin; a QR code carries its name).")
        var monitorName: String?

        @Option(help: "The PIN, for scripts (otherwise it is asked for).")
        var pinCode: String?

        @Option(help: "The name the monitor shows for the hub (default: Argus on HOSTNAME).")
        var name: String?

        func validate() throws {
            guard (qr != nil) != pin else { throw ValidationError("choose one: --qr TEXT or --pin") }
        }

        func run() async throws {
            var pairing = HubLaunch.MonitorPairing()
            pairing.qr = qr
            pairing.pin = pin
            pairing.monitor = monitor
            pairing.address = address
            pairing.fingerprint = fingerprint
            pairing.monitorName = monitorName
            pairing.pinCode = pinCode
            print(try await hubCommand { try await HubLaunch.pairMonitor(data.url, pairing, hubName: name) })
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the paired monitors.")

        @OptionGroup var data: DataOptions

        @Flag(help: "One JSON object per monitor.")
        var json = false

        func run() async throws {
            for line in try await hubCommand({ try await HubLaunch.monitors(data.url, json: json) }) { print(line) }
        }
    }

    struct Forget: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Unpair a monitor (it is told when it can be reached) and stop watching it.")

        @OptionGroup var data: DataOptions

        @Argument(help: "The monitor's id (or its first characters) or name.")
        var monitor: String

        func run() async throws {
            print(try await hubCommand { try await HubLaunch.forgetMonitor(data.url, monitor) })
        }
    }
}

/// Runs `body`: the hub's refusals become a usage error (exit 64), its failures one line and exit 1.
func hubCommand<T>(_ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let error as HubError {
        throw ValidationError(error.description)
    } catch let failure as HubFailure {
        FileHandle.standardError.write(Data("argus-hub: \(failure.description)\n".utf8))
        throw ExitCode.failure
    }
}
