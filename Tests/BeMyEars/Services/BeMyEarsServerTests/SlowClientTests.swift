import BeMyEarsServer
import ConnectionGuard
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import TestSupport
import Testing

/// Clients that hold the signaling server's connections: a request head sent a line at a time (slowloris), before
/// and after a first request, and one address opening connections. A WebSocket, once upgraded, is not cut by
/// any of it (its heartbeats are the protocol's business).
@Suite("bemyears-server against slow and greedy clients")
struct SlowClientTests {
    static let upgrade =
        "GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"

    func app(_ limits: ConnectionLimits) async throws -> some ApplicationProtocol {
        var configuration = BeMyEarsServerConfiguration(
            port: 0,
            advertisesService: false,
            logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        )
        configuration.connectionLimits = limits
        return try await buildApplication(configuration)
    }

    @Test("a WebSocket upgrade that trickles in is cut at the deadline; a prompt one stays open past it")
    func slowUpgrade() async throws {
        try await app(ConnectionLimits(requestHeadTimeout: .seconds(1))).test(.live) { client in
            let port = try #require(client.port)
            let slow = try RawTCP(port: port)
            let (cut, after) = await slow.trickle(head: "GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            #expect(cut, "the server still waits for the head after \(after)")

            let prompt = try RawTCP(port: port)
            let answer = await prompt.exchange(Self.upgrade)
            #expect(answer.hasPrefix("HTTP/1.1 101"), "\(answer.prefix(200))")
            #expect(
                !(await prompt.closedByServer(within: .seconds(2))), "an open WebSocket was cut by the head deadline")
        }
    }

    @Test("a later request head on a kept-alive connection has the same deadline")
    func slowLaterRequest() async throws {
        try await app(ConnectionLimits(requestHeadTimeout: .seconds(1))).test(.live) { client in
            let port = try #require(client.port)
            let connection = try RawTCP(port: port)
            let first = await connection.exchange("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            #expect(first.hasPrefix("HTTP/1.1 200"), "\(first.prefix(200))")
            let (cut, after) = await connection.trickle(head: "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            #expect(cut, "the server still waits for the second head after \(after)")
        }
    }

    @Test("one address may hold only so many connections; the next closes at once")
    func connectionsPerAddress() async throws {
        let limits = ConnectionLimits(requestHeadTimeout: .seconds(30), connectionsPerAddress: 3)
        try await app(limits).test(.live) { client in
            let port = try #require(client.port)
            // The test client's own connection is the first of the three.
            #expect(try await client.execute(uri: "/health", method: .get).status == .ok)
            let held = try (0..<2).map { _ in try RawTCP(port: port) }
            for (index, connection) in held.enumerated() {
                let text = await connection.exchange(Self.upgrade)
                #expect(text.hasPrefix("HTTP/1.1 101"), "connection \(index): \(text.prefix(100))")
            }
            let extra = try RawTCP(port: port)
            #expect(await extra.closedByServer(within: .seconds(3)), "a fourth connection from one address stays open")
            _ = held
        }
    }
}
