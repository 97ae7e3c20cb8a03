import Foundation
import TestSupport

/// A real `toukan-server` process on a free port (`--port 0 --json`).
final class ToukanServerProcess: Sendable {
    let process: BackgroundProcess
    let port: Int

    var url: String { "http://127.0.0.1:\(port)" }

    private init(process: BackgroundProcess, port: Int) {
        self.process = process
        self.port = port
    }

    /// Starts the server on `dataDirectory` and waits for its ready line.
    static func start(dataDirectory: String, _ arguments: [String] = []) async throws -> ToukanServerProcess {
        let process = try BackgroundProcess(
            try Subprocess.builtProduct("toukan-server"),
            ["--host", "127.0.0.1", "--port", "0", "--json", "--data-dir", dataDirectory] + arguments)
        let line: String
        do {
            line = try await process.ready("toukan-server") { $0.contains(#""event":"ready""#) }
        } catch {
            await process.stop()
            throw error
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let port = object["port"] as? Int, port > 0
        else {
            await process.stop()
            throw FixtureFailure("toukan-server did not become ready; stderr:\n\(process.errorOutput)")
        }
        return ToukanServerProcess(process: process, port: port)
    }

    @discardableResult
    func stop() async -> Int32? { await process.stop(grace: .seconds(10)) }

    var log: String { process.errorOutput }

    /// `GET /memories` through curl (an independent client).
    func memories() async throws -> [[String: Any]] {
        let result = try await Subprocess.run("curl", ["-sS", "--max-time", "30", "\(url)/memories"])
        guard result.status == 0,
            let list = try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [[String: Any]]
        else { throw FixtureFailure("GET /memories failed: \(result.stderrText) \(result.stdoutText)") }
        return list
    }
}
