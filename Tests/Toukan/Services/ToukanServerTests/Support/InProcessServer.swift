import ConnectionGuard
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import TestSupport
import ToukanServer

/// A ToukanServer application on a fresh data directory, driven over a real socket by HummingbirdTesting.
enum InProcessServer {
    static func run(
        maximumUploadBytes: Int64 = 2 << 30, workers: Int = 0, transcribe: Bool = false, dataDirectory: URL? = nil,
        limits: ConnectionLimits = ConnectionLimits(),
        _ body: @escaping @Sendable (any TestClientProtocol, URL) async throws -> Void
    ) async throws {
        let directory = try dataDirectory ?? Subprocess.temporaryDirectory("toukan-server")
        var logger = Logger(label: "toukan-server-test")
        logger.logLevel = .warning
        var configuration = ToukanServerConfiguration(
            host: "127.0.0.1", port: 0, dataDirectory: directory.path, maximumUploadBytes: maximumUploadBytes,
            workers: workers, transcribe: transcribe, logger: logger)
        configuration.connectionLimits = limits
        let app = try await buildToukanServer(configuration)
        // A hang fails the test (saying where) instead of stalling the whole run.
        try await withTimeout(.seconds(300), "an in-process toukan-server test") {
            try await app.test(.live) { client in try await body(client, directory) }
        }
        if dataDirectory == nil { try? FileManager.default.removeItem(at: directory) }
    }

    static func upload(
        _ client: any TestClientProtocol, body: [UInt8], contentType: String = Multipart.contentType,
        headers extra: HTTPFields = [:]
    ) async throws -> TestResponse {
        var headers: HTTPFields = [.contentType: contentType]
        headers.append(contentsOf: extra)
        return try await client.execute(
            uri: "/upload", method: .post, headers: headers, body: ByteBuffer(bytes: body))
    }

    static func json(_ response: TestResponse) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any]) ?? [:]
    }

    static func memories(_ client: any TestClientProtocol) async throws -> [[String: Any]] {
        let response = try await client.execute(uri: "/memories", method: .get)
        return (try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [[String: Any]]) ?? []
    }

    /// Files left in `incoming/` (a refused or broken upload must leave none).
    static func incomingFiles(_ directory: URL) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("incoming").path)) ?? []
    }
}
