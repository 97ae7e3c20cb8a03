public import ArgusHub
public import Foundation
import Hummingbird
import Logging
import Synchronization
public import TestSupport

/// A hub serving on a free loopback port from a new data directory, for as long as a test needs it.
public final class HubFixture: Sendable {
    public let directory: URL
    public let url: String
    private let task: Task<Void, any Error>

    /// Starts a hub; `adjust` may change the configuration (cameras, the clock) before it starts.
    public init(_ adjust: (inout HubConfiguration) throws -> Void = { _ in }) async throws {
        directory = try Subprocess.temporaryDirectory("argus-hub")
        var configuration = HubConfiguration(dataDirectory: directory)
        configuration.port = 0
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        configuration.plainHTTP = true
        configuration.advertises = false
        configuration.host = "127.0.0.1"
        configuration.onReady = { port, _ in continuation.yield(port) }
        try adjust(&configuration)
        var logger = Logger(label: "argus-hub-test")
        logger.logLevel = .error
        let app = try await makeHubApplication(configuration, logger: logger)
        task = Task { try await app.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw HubError("the hub did not start") }
        url = "http://127.0.0.1:\(port)"
    }

    /// The owner's admin key (what `createPairingCode` needs).
    public var adminKey: String {
        get throws {
            try String(contentsOf: directory.appendingPathComponent("admin-token"), encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    /// A JSON call to the hub; `token` goes in as a bearer token.
    public func call(
        _ method: String, _ path: String, token: String? = nil, headers: [String: String] = [:], body: String? = nil
    ) async throws -> LoopbackHTTP.Answer {
        var headers = headers
        if let token { headers["Authorization"] = "Bearer \(token)" }
        return try await LoopbackHTTP.request(url + path, method: method, headers: headers, body: body)
    }

    /// A fresh pairing code from the API, as the owner.
    public func pairingCode() async throws -> String {
        let answer = try await call("POST", "/api/v1/mobile/auth/pair", headers: ["X-Argus-Admin": try adminKey])
        guard answer.status == 200, let code = try Self.json(answer)["pairing_code"] as? String else {
            throw HubError("no pairing code: \(answer.status) \(answer.text)")
        }
        return code
    }

    /// Pairs `deviceId` and returns its access and refresh tokens.
    public func pair(_ deviceId: String, name: String = "Test phone") async throws -> (access: String, refresh: String)
    {
        let code = try await pairingCode()
        let answer = try await call(
            "POST", "/api/v1/mobile/auth/verify",
            body: #"{"pairing_code":"\#(code)","device_name":"\#(name)","device_id":"\#(deviceId)"}"#)
        let json = try Self.json(answer)
        guard answer.status == 200, let access = json["access_token"] as? String,
            let refresh = json["refresh_token"] as? String
        else { throw HubError("not paired: \(answer.status) \(answer.text)") }
        return (access, refresh)
    }

    public static func json(_ answer: LoopbackHTTP.Answer) throws -> [String: Any] {
        (try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any]) ?? [:]
    }

    /// Stops the hub and removes its data directory.
    public func stop() async {
        task.cancel()
        _ = try? await task.value
        try? FileManager.default.removeItem(at: directory)
    }
}
