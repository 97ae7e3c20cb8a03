import BeMyEarsServer
import Foundation
import Testing

@testable import BeMyEarsServer

/// The coturn of `--with-turn` relays to public addresses, never into this machine or its network, unless the
/// operator allows a range (`--turn-allow-peer`): asked of a real coturn by an independent TURN client (aioice).
@Suite("TURN relay: which peers coturn may reach", .serialized)
struct TURNRelayPolicyTests {
    @Test("private, loopback, link-local and CGNAT peers are refused with 403; public and allowed ones are not")
    func deniedPeers() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/turnserver") else {
            Issue.record("coturn is not installed: apt-get install coturn (this test needs /usr/bin/turnserver)")
            return
        }
        // Not 3478: another test's coturn may be starting on it right now.
        let port = try await LocalTURNServer.freePort(preferring: Int.random(in: 20_000...29_999), host: "127.0.0.1")
        let server = try await LocalTURNServer.start(
            listeningHost: "127.0.0.1", port: port, allowedPeers: ["10.9.0.0/16"])
        let credential = server.credentials().credential(for: "relay-policy", at: Date())
        let run = try await InteropScript.run(
            "turn_peers.py",
            [
                "--server", "127.0.0.1:\(server.port)",
                "--username", credential.username,
                "--password", credential.password,
                "--denied", "10.1.2.3,192.168.1.1,172.16.0.1,169.254.1.1,100.64.0.1,127.0.0.2,0.1.2.3",
                "--allowed", "10.9.0.7,127.0.0.1,8.8.8.8",
            ],
            timeout: .seconds(60)
        )
        await server.stop()
        #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")
        #expect(run.result["ok"] as? Bool == true, "\(run.result["reason"] ?? run.stdout)")
    }

    @Test(
        "an allowed peer is an address or a CIDR range, written as coturn's first-last",
        arguments: [
            ("192.168.1.0/24", "192.168.1.0-192.168.1.255"),
            ("192.168.1.77/24", "192.168.1.0-192.168.1.255"),
            ("10.0.0.7", "10.0.0.7"),
            ("10.0.0.7/32", "10.0.0.7"),
            ("172.16.0.0/12", "172.16.0.0-172.31.255.255"),
            ("0.0.0.0/0", "0.0.0.0-255.255.255.255"),
            ("fd00::/8", "fd00::-fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"),
            ("fe80::1", "fe80::1"),
        ]
    )
    func ranges(entry: String, expected: String) throws {
        #expect(try TURNPeerPolicy(allowing: [entry], loopback: false).allowedRanges == [expected])
    }

    @Test(
        "anything else is refused, naming the option and the form it takes",
        arguments: [
            "192.168.1.0/33", "lan", "10.0.0.0/", "/24", "10.0.0.0/8/8", "fd00::/129", "1.2.3.4.5",
        ])
    func badRanges(entry: String) {
        #expect(throws: ServerOptions.Invalid.self) { try TURNPeerPolicy(allowing: [entry], loopback: false) }
        var options = ServerOptions()
        options.withTURN = true
        options.turnAllowedPeers = [entry]
        #expect(throws: ServerOptions.Invalid.self) { try options.validate() }
    }

    @Test("--turn-allow-peer needs --with-turn (an own coturn is configured in its own file)")
    func allowPeerNeedsWithTURN() {
        var options = ServerOptions()
        options.turnAllowedPeers = ["192.168.1.0/24"]
        #expect(throws: ServerOptions.Invalid.self) { try options.validate() }
        options.withTURN = true
        #expect(throws: Never.self) { try options.validate() }
    }
}
