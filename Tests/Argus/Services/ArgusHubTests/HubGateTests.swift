import NIOCore
import Testing

@testable import ArgusHub

@Suite("Who counts as the hub's own machine")
struct HubGateTests {
    @Test(
        "loopback addresses, v4, v6 and v4-mapped; nothing else",
        arguments: [
            ("127.0.0.1", true), ("127.8.9.10", true), ("::1", true), ("::ffff:127.0.0.1", true),
            ("192.168.1.20", false), ("10.0.0.1", false), ("::ffff:192.168.1.2", false), ("fe80::1", false),
        ])
    func loopback(address: String, expected: Bool) throws {
        let socket = try SocketAddress(ipAddress: address, port: 443)
        #expect(HubGate<HubRequestContext>.isLoopback(socket) == expected)
    }

    @Test("a bearer header is read case-insensitively; anything else is none")
    func bearer() {
        #expect(HubGate<HubRequestContext>.bearer("Bearer abc.def.ghi") == "abc.def.ghi")
        #expect(HubGate<HubRequestContext>.bearer("bearer  xyz ") == "xyz")
        #expect(HubGate<HubRequestContext>.bearer("Basic dXNlcjpwYXNz") == nil)
        #expect(HubGate<HubRequestContext>.bearer("Bearer") == nil)
        #expect(HubGate<HubRequestContext>.bearer(nil) == nil)
    }
}
