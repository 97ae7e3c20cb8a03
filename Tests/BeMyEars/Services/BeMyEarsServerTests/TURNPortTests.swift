import NIOCore
import NIOPosix
import Testing

@testable import BeMyEarsServer

/// The port a private coturn gets: the preferred one when it is free for both TCP and UDP, else another that is.
@Suite("TURN port choice")
struct TURNPortTests {
    @Test("a preferred port taken over TCP or UDP is passed over for one free for both", arguments: [true, false])
    func takenPortPassedOver(tcp: Bool) async throws {
        let group = MultiThreadedEventLoopGroup.singleton
        let taken: any Channel =
            tcp
            ? try await ServerBootstrap(group: group).bind(host: "127.0.0.1", port: 0).get()
            : try await DatagramBootstrap(group: group).bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(taken.localAddress?.port)
        let chosen = try await LocalTURNServer.freePort(preferring: port, host: "127.0.0.1")
        #expect(chosen != port)
        try await taken.close().get()
        #expect(try await LocalTURNServer.freePort(preferring: port, host: "127.0.0.1") == port, "free again")
    }
}
