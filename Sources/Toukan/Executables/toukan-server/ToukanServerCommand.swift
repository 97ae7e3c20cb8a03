import ArgumentParser
import Foundation
import ToukanServer

/// `toukan-server`: argument parsing only; the server is `ToukanServerLaunch.run(_:output:)` in ToukanServer.
@main
struct ToukanServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "toukan-server",
        abstract: "Toukan's backend: POST /upload, tus 1.0 at /files/, processing, the review page at /.",
        discussion: """
            Example: toukan-server --port 8090 --data-dir /tmp/toukan, then \
            curl -F file=@meeting.m4a http://127.0.0.1:8090/upload and open http://127.0.0.1:8090/. Stop with Ctrl-C.
            """
    )

    @Option(help: "Address to listen on (0.0.0.0: every interface).")
    var host = "127.0.0.1"

    @Option(help: "Port to listen on (0: any free port; see --json).")
    var port = 8090

    @Option(help: "Where memories, audio and uploads live (default: $XDG_DATA_HOME/toukan-server).")
    var dataDir: String?

    @Option(
        help: "postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE for memories and jobs shared by several servers.")
    var database: String?

    @Option(help: "The largest upload accepted, in bytes (default 2 GiB).")
    var maxUploadBytes: Int64 = 2 << 30

    @Option(help: "Processing workers in this process (0: receive only).")
    var workers = 1

    @Flag(help: "Do not transcribe (PocketSphinx); duration and loudness are still measured.")
    var noTranscription = false

    @Flag(help: "Print one JSON object per line on stdout ({\"event\":\"ready\",\"port\":…} once listening).")
    var json = false

    var options: ToukanServerOptions {
        var options = ToukanServerOptions()
        options.host = host
        options.port = port
        options.dataDirectory = dataDir
        options.database = database
        options.maximumUploadBytes = maxUploadBytes
        options.workers = workers
        options.transcribe = !noTranscription
        options.json = json
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
        try await ToukanServerLaunch.run(options) { line in
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
        }
    }
}
