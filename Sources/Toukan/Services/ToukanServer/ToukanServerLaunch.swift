import CanonicalJSON
import Foundation
import Hummingbird
import Logging

/// Runs `toukan-server` for ``ToukanServerOptions`` until SIGINT/SIGTERM, with the lines people and scripts read.
public enum ToukanServerLaunch {
    /// `output` gets `Toukan server is ready: …` or `{"event":"ready","port":N,"url":…}` once listening, and with
    /// `json` `{"event":"stopped"}` at the end. Logs go to stderr.
    public static func run(_ options: ToukanServerOptions, output: @escaping @Sendable (String) -> Void) async throws {
        var logger = Logger(label: "toukan-server")
        logger.logLevel = .info
        let json = options.json
        let host = options.host
        let configuration = ToukanServerConfiguration(
            host: host, port: options.port, dataDirectory: options.resolvedDataDirectory, database: options.database,
            maximumUploadBytes: options.maximumUploadBytes, workers: options.workers, transcribe: options.transcribe,
            logger: logger,
            onReady: { port in
                let shownHost = host == "0.0.0.0" ? "127.0.0.1" : host
                let url = "http://\(shownHost):\(port)/"
                output(
                    json
                        ? JSONValue.object(["event": "ready", "port": .number(Double(port)), "url": .string(url)])
                            .canonicalString
                        : "Toukan server is ready: POST \(url)upload, tus at \(url)files/, review at \(url)")
            })
        let app = try await buildToukanServer(configuration)
        try await app.runService()
        if json {
            output(JSONValue.object(["event": "stopped"]).canonicalString)
        }
    }
}
