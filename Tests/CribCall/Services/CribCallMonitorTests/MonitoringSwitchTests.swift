import ControlTransport
import CribCallMonitor
import CribCallProtocol
import CribCallStore
import CribCallTestSupport
import DeviceIdentity
import Foundation
import StreamMedia
import Testing

/// Monitor Home's "Monitoring: ON/OFF" (seed 000 §3.2): the `monitoring` setting, switched here or by another
/// process, and what paired listeners see of it (MONITOR_STATE).
@Suite("MonitorService: monitoring switched off and on")
struct MonitoringSwitchTests {
    func harness(engine: InMemoryMediaEngine? = nil) throws -> MonitorHarness {
        try MonitorHarness(database: try CribCallDatabase.inMemory(), mediaEngine: engine)
    }

    func switchMonitoring(_ on: Bool, _ harness: MonitorHarness) async throws {
        try harness.database.updateMonitorSettings { $0.monitoring = on }
        await harness.service.applyStoredSettings()
    }

    func noises(_ harness: MonitorHarness) -> Int {
        harness.events.filter { if case .noise = $0 { true } else { false } }.count
    }

    @Test("a paired listener learns the switch first thing on connecting, and every change at once, in order")
    func toldOnConnectAndOnChange() async throws {
        let harness = try harness()
        /// A newly paired listener, connected.
        func paired(_ name: String) async throws -> InMemoryControlConnection {
            let identity = try DeviceIdentity.generate(now: Date())
            try harness.database.trust(identity, as: identity.deviceId.uuidString.lowercased(), name: name)
            await harness.service.reloadTrust()
            return try await harness.connect(identity)
        }
        let connection = try await paired("Mum")
        var frames = connection.inbound.makeAsyncIterator()
        #expect(
            try await connection.nextMessage(&frames, includingState: true)
                == .monitorState(MonitorState(monitoring: .on)))
        try await switchMonitoring(false, harness)
        #expect(
            try await connection.nextMessage(&frames, includingState: true)
                == .monitorState(MonitorState(monitoring: .off)))
        #expect(await harness.event { $0 == .monitoringSwitched(on: false) } != nil)
        // A second listener connecting while it is off is told so before anything else.
        let late = try await paired("Dad")
        var lateFrames = late.inbound.makeAsyncIterator()
        #expect(
            try await late.nextMessage(&lateFrames, includingState: true)
                == .monitorState(MonitorState(monitoring: .off)))
        try await switchMonitoring(true, harness)
        for (link, var iterator) in [(connection, frames), (late, lateFrames)] {
            #expect(
                try await link.nextMessage(&iterator, includingState: true)
                    == .monitorState(MonitorState(monitoring: .on)))
        }
        await harness.stop()
    }

    @Test("while off, a loud room raises no noise event; switched on again, the same sound does")
    func noNoiseWhileOff() async throws {
        let harness = try harness()
        try await switchMonitoring(false, harness)
        // 6 s of a loud tone (level ≈ 84, over the default threshold of 60 for far longer than its 600 ms).
        #expect(await harness.service.detectSound(from: ToneInput(chunks: 60)) == nil)
        try await switchMonitoring(true, harness)
        #expect(await harness.service.detectSound(from: ToneInput(chunks: 60)) == nil)
        // One sound in 6 s is one noise (the cooldown is 10 s): a second would be the one heard while off.
        #expect(await harness.event { if case .noise = $0 { true } else { false } } != nil)
        try await Task.sleep(for: .milliseconds(300))
        #expect(noises(harness) == 1, "\(harness.events)")
        await harness.stop()
    }

    @Test("while off, a stream is declined with what to do; switching off ends the streams that run")
    func streamsWhileOff() async throws {
        let engine = InMemoryMediaEngine()
        let harness = try harness(engine: engine)
        let link = try await harness.trustedLink(try DeviceIdentity.generate(now: Date()))
        try await link.send(.startStreamRequest(StartStreamRequest(sessionId: "S1", mediaType: .audio)))
        #expect(
            await link.next()
                == .startStreamResponse(StartStreamResponse(sessionId: "S1", accepted: true)))
        try await switchMonitoring(false, harness)
        let ended = await harness.event {
            if case .streamEnded("S1", StreamEndReason.monitoringOff) = $0 { return true }
            return false
        }
        #expect(ended != nil, "\(harness.events)")
        #expect(await harness.service.activeStreams.isEmpty)
        try await link.send(.startStreamRequest(StartStreamRequest(sessionId: "S2", mediaType: .audioVideo)))
        let answer = try await link.sync().first { if case .startStreamResponse = $0 { true } else { false } }
        guard case .startStreamResponse(let response)? = answer else {
            Issue.record("no START_STREAM_RESPONSE for S2")
            return
        }
        #expect(response.sessionId == "S2" && !response.accepted)
        #expect(response.reason?.contains("monitoring is turned off at the monitor") == true, "\(response)")
        #expect(engine.peers(sessionId: "S2").isEmpty, "no sender is made while off")
        await harness.stop()
    }
}
