public import ArgusPush
public import Foundation
public import TestSupport

/// `Tests/Interop/argus/apns_standin.py` running: a local APNs over HTTP/2 and TLS that checks provider tokens
/// and headers as Apple's servers do, with the fixtures it made (its certificate, a .p8 key), and the
/// configuration for the hub's APNs client to reach it.
public struct APNsStandIn: Sendable {
    public static let keyId = "ABC123DEFG"
    public static let teamId = "TEAM123456"
    public static let topic = "com.example.argus"

    public let process: BackgroundProcess
    public let configuration: APNsConfiguration
    public let fixtures: URL

    /// Starts it; `unregistered` device tokens get 410.
    public static func start(python: String, unregistered: [String] = []) async throws -> APNsStandIn {
        let fixtures = try Subprocess.temporaryDirectory("apns-fixtures")
        let script = Fixtures.repositoryRoot.appendingPathComponent("Tests/Interop/argus/apns_standin.py").path
        let made = try await Subprocess.run(
            python, [script, "--make-cert", fixtures.path, "--make-provider-key", fixtures.path, "--key-id", keyId])
        guard made.status == 0 else { throw MissingValue(description: "apns_standin.py fixtures: \(made.stderrText)") }
        let process = try BackgroundProcess(
            python,
            [
                script, "--port", "0", "--cert", fixtures.appendingPathComponent("cert.pem").path, "--key",
                fixtures.appendingPathComponent("key.pem").path, "--public-key",
                fixtures.appendingPathComponent("provider-public.pem").path, "--team-id", teamId, "--key-id", keyId,
                "--topic", topic,
            ] + unregistered.flatMap { ["--unregistered", $0] })
        let ready = try await process.ready("apns_standin.py") { $0.contains(#""event": "ready""#) }
        guard let port = json(ready)["port"] as? Int else { throw MissingValue(description: "no port: \(ready)") }
        var configuration = APNsConfiguration(
            teamId: teamId, keyId: keyId,
            privateKeyPEM: try String(
                contentsOf: fixtures.appendingPathComponent("AuthKey_\(keyId).p8"), encoding: .utf8),
            topic: topic)
        configuration.server = URL(string: "https://127.0.0.1:\(port)")!
        configuration.trustRootsPEM = try String(
            contentsOf: fixtures.appendingPathComponent("cert.pem"), encoding: .utf8)
        return APNsStandIn(process: process, configuration: configuration, fixtures: fixtures)
    }

    /// The requests it answered so far (its `push` lines).
    public var pushes: [[String: Any]] {
        process.output.map(Self.json).filter { $0["event"] as? String == "push" }
    }

    public func stop() async {
        _ = await process.stop()
        try? FileManager.default.removeItem(at: fixtures)
    }

    public static func json(_ line: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]) ?? [:]
    }
}
