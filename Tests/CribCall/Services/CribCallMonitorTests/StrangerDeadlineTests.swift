import ControlTransport
import CribCallMonitor
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

    @Test("a burst of strangers is one connected line and one summary; a paired listener is reported every time")
    func strangersSummedUp() async throws {
        let harness = try MonitorHarness(strangerReportWindow: .milliseconds(600))
        let trusted = try await harness.trustedLink(try DeviceIdentity.generate(now: Date()))
        var strangers: [InMemoryControlConnection] = []
        for _ in 0..<5 { strangers.append(try await harness.connect(try DeviceIdentity.generate(now: Date()))) }
        let summary = await harness.event { event in
            if case .unpairedConnections = event { return true }
            return false
        }
        #expect(summary == .unpairedConnections(count: 4, within: .milliseconds(600)), "\(harness.events)")
        for stranger in strangers { await stranger.close(.ok) }
        #expect(
            await harness.event { if case .listenerDisconnected = $0 { true } else { false } } != nil,
            "\(harness.events)")
        // Time for the other four to end too (a wrong monitor would report them; the right one never does).
        try await Task.sleep(for: .milliseconds(500))
        let connected = harness.events.filter { if case .listenerConnected = $0 { true } else { false } }
        #expect(connected.count == 2, "one paired listener and the first stranger: \(connected)")
        #expect(connected.contains { if case .listenerConnected(_, _, true) = $0 { true } else { false } })
        let disconnected = harness.events.filter { if case .listenerDisconnected = $0 { true } else { false } }
        #expect(disconnected.count == 1, "only the announced stranger's: \(disconnected)")
        _ = trusted  // connected until here
        await harness.stop()
    }
}
