import Foundation
import TestSupport
import Testing

/// WebSockets live in their channels, not in the HTTP server's tasks: the server closes them itself when it stops.
@Suite("bemyears-server shutdown", .heavy("a bemyears-server process"))
struct ShutdownTests {
    @Test("SIGTERM: an open WebSocket gets close 1001 (going away) and a FIN, and the server exits 0")
    func openSocketsAreClosedGoingAway() async throws {
        let server = try await ServerProcess.start()
        let socket = try RawTCP(port: server.port)
        // RFC 6455 §1.3's example key, whose accept value is published beside it.
        let head = await socket.exchange(
            "GET /ws HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
        #expect(head.hasPrefix("HTTP/1.1 101"), "\(head)")
        #expect(head.lowercased().contains("sec-websocket-accept: s3pplmbitxaq9kygzzhzrbk+xoo="), "\(head)")
        async let exit = server.stop()
        let bytes = await socket.receiveUntilClosed(within: .seconds(15))
        #expect(bytes == [0x88, 0x02, 0x03, 0xE9], "a close frame with 1001, then the end of the connection")
        #expect(await exit == 0, "\(server.log.suffix(2000))")
    }
}
