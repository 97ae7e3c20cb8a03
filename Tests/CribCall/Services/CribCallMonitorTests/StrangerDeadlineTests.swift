import ControlTransport
import CribCallProtocol
import DeviceIdentity
import Foundation
import Testing

/// Issue 17 item 1: a connection whose certificate the monitor does not trust holds a slot only while it pairs.
@Suite("Unpaired connections: pair in time or make room")
struct StrangerDeadlineTests {
    @Test(
        "an unpaired connection that does not pair within the grace gets ERROR UNAUTHORIZED and is closed",
        .timeLimit(.minutes(1)))
    func silentStrangerClosed() async throws {
        let harness = try MonitorHarness(pairingGrace: .milliseconds(400))
        let stranger = try await harness.connect(try DeviceIdentity.generate(now: Date()))
        var frames = stranger.inbound.makeAsyncIterator()
        let error = try await stranger.nextMessage(&frames)
        guard case .error(let refusal)? = error else {
            Issue.record("expected ERROR, got \(String(describing: error))")
            return
        }
        #expect(refusal.error == "UNAUTHORIZED" && refusal.message.contains("pair within"), "\(refusal)")
        #expect(await stranger.closed() == .peerApplication(code: 2, reason: ""))
        await harness.stop()
    }

    @Test("a paired listener stays; a pairing under way gets the PIN session's time, and once paired stays too")
    func pairingGetsTime() async throws {
        let harness = try MonitorHarness(pairingGrace: .milliseconds(300))
        let trusted = try await harness.trustedLink(try DeviceIdentity.generate(now: Date()))
        // A person reads and types the PIN: longer than the bare grace.
        let connection = try await harness.pairByPIN(
            try DeviceIdentity.generate(now: Date()), name: "Mum's phone", typing: .seconds(1))
        var frames = connection.inbound.makeAsyncIterator()
        try await Task.sleep(for: .seconds(1))
        // Both still served: a PING is answered on each.
        try await connection.send(.ping(Ping(timestamp: 7)))
        #expect(try await connection.nextMessage(&frames) == .pong(Ping(timestamp: 7)))
        #expect(try await trusted.sync().isEmpty)
        await harness.stop()
    }
}
