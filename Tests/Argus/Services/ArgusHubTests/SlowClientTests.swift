import ArgusHub
import ArgusTestSupport
import ConnectionGuard
import Foundation
import TestSupport
import Testing

/// Clients that hold the hub's connections: a request head sent a byte at a time (slowloris), and one address
/// opening connections and saying nothing.
@Suite("argus-hub against slow and greedy clients")
struct SlowClientTests {
    static func port(of hub: HubFixture) throws -> Int {
        try #require(URL(string: hub.url)?.port)
    }

    @Test("a request head that trickles in is cut at the deadline; a prompt one is answered")
    func slowRequestHead() async throws {
        let hub = try await HubFixture {
            $0.connectionLimits = ConnectionLimits(requestHeadTimeout: .seconds(1))
        }
        let port = try Self.port(of: hub)
        let slow = try RawTCP(port: port)
        let (cut, after) = await slow.trickle(head: "GET /health HTTP/1.1\r\nHost: hub\r\n")
        #expect(cut, "the server still waits for the head after \(after)")
        let prompt = try RawTCP(port: port)
        let answer = await prompt.exchange("GET /health HTTP/1.1\r\nHost: hub\r\n\r\n")
        #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer.prefix(200))")
    }

    @Test("one address may hold only so many connections; the next closes at once, and a freed one counts again")
    func connectionsPerAddress() async throws {
        let hub = try await HubFixture {
            $0.connectionLimits = ConnectionLimits(requestHeadTimeout: .seconds(30), connectionsPerAddress: 3)
        }
        let port = try Self.port(of: hub)
        var held = try (0..<3).map { _ in try RawTCP(port: port) }
        // Each answers while it is within the limit.
        for (index, connection) in held.enumerated() {
            let text = await connection.exchange("GET /health HTTP/1.1\r\nHost: hub\r\n\r\n")
            #expect(text.hasPrefix("HTTP/1.1 200"), "connection \(index): \(text.prefix(100))")
        }
        let extra = try RawTCP(port: port)
        #expect(await extra.closedByServer(within: .seconds(3)), "a fourth connection from the same address stays open")
        held.removeLast()  // closes it
        let answer: String = try await awaitValue("a slot freed", timeout: .seconds(5)) {
            let again = try RawTCP(port: port)
            let text = await again.exchange("GET /health HTTP/1.1\r\nHost: hub\r\n\r\n", timeout: .seconds(1))
            return text.hasPrefix("HTTP/1.1 200") ? text : nil
        }
        #expect(answer.contains("200"))
        _ = held
    }
}
