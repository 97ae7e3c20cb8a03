import ConnectionGuard
import Foundation
import HTTPTypes
import HummingbirdTesting
import TestSupport
import Testing

/// Clients that hold toukan-server's connections: a request head sent a line at a time (slowloris), and one
/// address opening connections and saying nothing. A slow upload *body* is not cut by the head deadline.
@Suite("toukan-server against slow and greedy clients")
struct SlowClientTests {
    @Test("a request head that trickles in is cut at the deadline; a body that trickles in is not")
    func slowRequestHead() async throws {
        try await InProcessServer.run(limits: ConnectionLimits(requestHeadTimeout: .seconds(1))) { client, _ in
            let port = try #require(client.port)
            let slow = try RawTCP(port: port)
            let (cut, after) = await slow.trickle(head: "GET /health HTTP/1.1\r\nHost: toukan\r\n")
            #expect(cut, "the server still waits for the head after \(after)")

            // A tus PATCH whose body arrives slowly (2 s, longer than the head deadline) is answered.
            let created = try RawTCP(port: port)
            let creation = await created.exchange(
                "POST /files/ HTTP/1.1\r\nHost: toukan\r\nTus-Resumable: 1.0.0\r\nUpload-Length: 10\r\n"
                    + "Upload-Metadata: filename dGVzdC53YXY=\r\nContent-Length: 0\r\n\r\n")
            let location = try #require(
                creation.split(separator: "\r\n").first { $0.lowercased().hasPrefix("location:") }?
                    .split(separator: " ", maxSplits: 1).last.map(String.init),
                "\(creation.prefix(300))")
            let path = URL(string: location)?.path ?? location
            let patch = try RawTCP(port: port)
            #expect(
                patch.send(
                    "PATCH \(path) HTTP/1.1\r\nHost: toukan\r\nTus-Resumable: 1.0.0\r\nUpload-Offset: 0\r\n"
                        + "Content-Type: application/offset+octet-stream\r\nContent-Length: 10\r\n\r\n"))
            for byte in 0..<9 {
                #expect(patch.send(String(byte)))
                try await Task.sleep(for: .milliseconds(220))
            }
            // Read whole and judged: ten bytes are no M4A file (the deadline did not cut it).
            let answer = await patch.exchange("9")
            #expect(answer.hasPrefix("HTTP/1.1 415") && answer.contains("only 10 bytes"), "\(answer.prefix(300))")
        }
    }

    @Test("one address may hold only so many connections; the next closes at once")
    func connectionsPerAddress() async throws {
        let limits = ConnectionLimits(requestHeadTimeout: .seconds(30), connectionsPerAddress: 3)
        try await InProcessServer.run(limits: limits) { client, _ in
            let port = try #require(client.port)
            // The test client's own connection is the first of the three.
            #expect(try await client.execute(uri: "/health", method: .get).status == .ok)
            let held = try (0..<2).map { _ in try RawTCP(port: port) }
            for (index, connection) in held.enumerated() {
                let text = await connection.exchange("GET /health HTTP/1.1\r\nHost: toukan\r\n\r\n")
                #expect(text.hasPrefix("HTTP/1.1 200"), "connection \(index): \(text.prefix(100))")
            }
            let extra = try RawTCP(port: port)
            #expect(await extra.closedByServer(within: .seconds(3)), "a fourth connection from one address stays open")
            _ = held
        }
    }
}
