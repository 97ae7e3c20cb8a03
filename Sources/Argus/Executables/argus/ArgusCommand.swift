import ArgumentParser
import ArgusClient
import Foundation

/// `argus`: argument parsing only; every command is a function of `ArgusCommands` in ArgusClient.
@main
struct ArgusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "argus",
        abstract: "A client of an Argus hub: pair with a code, list events, watch, thumbnails, cameras, snapshots.",
        discussion: """
            Example: argus pair --hub https://192.168.1.20:8443 --fingerprint <64 hex digits> --code 847291, \
            then argus events. The fingerprint and code are what `argus-hub pair` shows on the hub.
            """,
        subcommands: [Pair.self, Events.self, Watch.self, Thumbnail.self, Cameras.self, Snapshot.self]
    )
}

struct ConfigOptions: ParsableArguments {
    @Option(help: "Where the session (tokens, 0600) is kept (default: $XDG_CONFIG_HOME/argus).")
    var configDir: String?

    var url: URL { ArgusCommands.configDirectory(configDir) }
}

/// Runs `body`; the client's refusals are printed in their words and end the command with status 1.
func client<T>(_ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let error as ArgusClientError {
        FileHandle.standardError.write(Data("argus: \(error)\n".utf8))
        throw ExitCode(1)
    }
}

struct Pair: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Pair with a hub by the code and fingerprint it shows.")
    @OptionGroup var config: ConfigOptions
    @Option(help: "The hub: https://HOST:PORT.") var hub: String?
    @Option(help: "The hub's certificate fingerprint (64 hex digits; spaces allowed).") var fingerprint: String?
    @Option(help: "The 6-digit pairing code.") var code: String?
    @Option(help: "Instead of the three above: the text of the hub's pairing QR code.") var qr: String?
    @Option(help: "This device's name on the hub.") var name = "argus on \(ProcessInfo.processInfo.hostName)"
    @Option(help: "This device's id (default: a new one).") var deviceId: String?

    func validate() throws {
        guard qr != nil || (hub != nil && fingerprint != nil && code != nil) else {
            throw ValidationError("give --hub, --fingerprint and --code (what argus-hub pair shows), or --qr")
        }
    }

    func run() async throws {
        print(
            try await client {
                if let qr {
                    return try await ArgusCommands.pair(qr: qr, name: name, deviceId: deviceId, config: config.url)
                }
                return try await ArgusCommands.pair(
                    hub: hub ?? "", fingerprint: fingerprint ?? "", code: code ?? "", name: name, deviceId: deviceId,
                    config: config.url)
            })
    }
}

struct Events: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List events, newest first.")
    @OptionGroup var config: ConfigOptions
    @Option(help: "Page, from 1.") var page = 1
    @Option(help: "Events per page (1 to 100).") var limit = 20
    @Flag(help: "One JSON object per event.") var json = false

    func run() async throws {
        for line in try await client({
            try await ArgusCommands.events(config: config.url, page: page, limit: limit, json: json)
        }) {
            print(line)
        }
    }
}

struct Watch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print new events as they come (Ctrl-C to stop).")
    @OptionGroup var config: ConfigOptions
    @Option(help: "Seconds between looks.") var interval: Double = 5
    @Flag(help: "One JSON object per event.") var json = false

    func run() async throws {
        guard (1...3600).contains(interval) else { throw ValidationError("--interval is 1 to 3600 seconds.") }
        try await client {
            try await ArgusCommands.watch(config: config.url, interval: interval, json: json) { line in
                FileHandle.standardOutput.write(Data((line + "\n").utf8))
            }
        }
    }
}

struct Thumbnail: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Save an event's thumbnail (JPEG, ≤ 50 KB).")
    @OptionGroup var config: ConfigOptions
    @Argument(help: "The event's id.") var event: String
    @Option(name: .shortAndLong, help: "Where to write the JPEG.") var output: String

    func run() async throws {
        print(
            try await client {
                try await ArgusCommands.picture(config: config.url, eventId: event, cameraId: nil, output: output)
            })
    }
}

struct Cameras: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the hub's cameras.")
    @OptionGroup var config: ConfigOptions
    @Flag(help: "One JSON object per camera.") var json = false

    func run() async throws {
        for line in try await client({ try await ArgusCommands.cameras(config: config.url, json: json) }) {
            print(line)
        }
    }
}

struct Snapshot: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Save a camera's picture now (JPEG, ≤ 100 KB).")
    @OptionGroup var config: ConfigOptions
    @Argument(help: "The camera's id (see `argus cameras`).") var camera: String
    @Option(name: .shortAndLong, help: "Where to write the JPEG.") var output: String

    func run() async throws {
        print(
            try await client {
                try await ArgusCommands.picture(config: config.url, eventId: nil, cameraId: camera, output: output)
            })
    }
}
