import NIOCore
import NIOPosix
import TestSupport
import Testing

@testable import BeMyEarsServer

/// The port a private coturn gets: the preferred one when it is free for both TCP and UDP, else another that is.
@Suite("TURN port choice")
struct TURNPortTests {
    @Test("a preferred port taken over TCP or UDP is passed over for one free for both", arguments: [true, false])
    func takenPortPassedOver(tcp: Bool) async throws {
        let group = MultiThreadedEventLoopGroup.singleton
        // Below the kernel's ephemeral range and coturn's relay range (49152–65535): no other test's socket lands on
        // it by chance between "taken" and "free again".
        let held: any Channel = try await FixedPort.belowEphemeralRange(attempts: 50) { candidate in
            tcp
                ? try await ServerBootstrap(group: group).bind(host: "127.0.0.1", port: candidate).get()
                : try await DatagramBootstrap(group: group).bind(host: "127.0.0.1", port: candidate).get()
        }
        let port = try #require(held.localAddress?.port)
        let chosen = try await LocalTURNServer.freePort(preferring: port, host: "127.0.0.1")
        #expect(chosen != port)
        try await held.close().get()
        #expect(try await LocalTURNServer.freePort(preferring: port, host: "127.0.0.1") == port, "free again")
    }
}
