import Foundation
import TestSupport

/// A real `bemyears-server` process on a free port (`--port 0 --json`), for tests that talk to it like a client.
final class ServerProcess: Sendable {
    let process: BackgroundProcess
    let port: Int

    var httpURL: String { "http://127.0.0.1:\(port)/" }
    var webSocketURL: String { "ws://127.0.0.1:\(port)/ws" }

    private init(process: BackgroundProcess, port: Int) {
        self.process = process
        self.port = port
    }

    /// Starts the server and waits for its `{"event":"ready","port":…}` line.
    static func start(_ arguments: [String] = [], bonjour: Bool = false) async throws -> ServerProcess {
        let executable = try Subprocess.builtProduct("bemyears-server")
        let process = try BackgroundProcess(
            executable,
            ["--host", "127.0.0.1", "--port", "0", "--json"] + (bonjour ? [] : ["--no-bonjour"]) + arguments
        )
        let line: String
        do {
            line = try await process.ready("bemyears-server") { $0.contains(#""event":"ready""#) }
        } catch {
            await process.stop()
            throw error
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let port = object["port"] as? Int, port > 0
        else {
            await process.stop()
            throw ServerFailure("bemyears-server did not become ready; stderr:\n\(process.errorOutput)")
        }
        return ServerProcess(process: process, port: port)
    }

    /// SIGTERM, and the exit status (nil if it had to be killed).
    @discardableResult
    func stop() async -> Int32? {
        await process.stop(grace: .seconds(10))
    }

    /// What the server logged so far.
    var log: String { process.errorOutput }
}

struct ServerFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The Python peers in `Tests/Interop/bemyears/`.
enum InteropScript {
    static func path(_ name: String) -> String {
        Fixtures.repositoryRoot.appendingPathComponent("Tests/Interop/bemyears/\(name)").path
    }

    /// The venv's Python; a clear failure when it is missing (these tests never skip silently).
    static func python() throws -> String {
        guard let python = InteropPeers.python else {
            throw ServerFailure(
                "the Python venv with the independent peers is missing: run `make test` (it installs "
                    + "websockets==15.0.1 and selenium==4.51.0 into .venv), or set HOMEAPPS_PYTHON"
            )
        }
        return python
    }

    /// Runs a script to completion; returns its exit status and its JSON result line.
    ///
    /// The scripts print `{"event": "ready"}` once started (imports done; browser_call.py: both browsers up), and
    /// `timeout` counts from there: a peer's start-up is no part of the test's deadline.
    static func run(
        _ script: String,
        _ arguments: [String],
        timeout: Duration
    ) async throws -> (status: Int32?, result: [String: Any], stdout: String, stderr: String) {
        let process = try BackgroundProcess(try python(), [path(script)] + arguments)
        // browser_call.py bounds its browsers' start-up itself (--launch-timeout, 120 s), then prints its result.
        _ = try? await process.ready(script, timeout: .seconds(180)) { jsonObject($0)?["event"] as? String == "ready" }
        let status = await process.waitForExit(timeout: timeout)
        let stdout = process.output.joined(separator: "\n")
        let line = process.output.last { $0.hasPrefix("{") } ?? "{}"
        let result = (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]) ?? [:]
        return (status, result, stdout, process.errorOutput)
    }
}
