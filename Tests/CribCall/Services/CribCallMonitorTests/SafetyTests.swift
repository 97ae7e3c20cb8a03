import AudioCapture
import ControlTransport
import CribCallMonitor
import CribCallProtocol
import CribCallStore
import CribCallTestSupport
import DeviceIdentity
import Foundation
import SafetyDetection
import SoundDetection
import Synchronization
import TestSupport
import Testing

@Suite("MonitorService: safety detections over the control channel (PROTOCOL.md §11)")
struct SafetyTests {
    /// A monitor with a camera twin watched, and a paired listener.
    struct Rig {
        let harness: MonitorHarness
        let camera = TestCamera()
        let watching: Task<Void, Never>

        init() throws {
            harness = try MonitorHarness()
            let service = harness.service
            let camera = camera
            watching = Task { await service.watchSafety(camera: camera) }
        }

        /// Frames until the monitor says it is active, and from then on until ``stopShowing()``.
        func activate() async throws {
            camera.keepShowing()
            try await eventually("monitoring to be active") {
                await harness.event {
                    if case .safetyStatus(let status) = $0 { return status.monitoring == .active }
                    return false
                } != nil
            }
        }

        /// No more frames (a frame after an unplug would mean the camera is back).
        func stopShowing() async {
            await camera.stopShowing()
        }

        func stop() async {
            await stopShowing()
            watching.cancel()
            await harness.stop()
        }
    }

    /// The next message of `type` on `connection`, skipping others.
    static func next(
        _ type: ControlMessageType, on connection: InMemoryControlConnection,
        _ frames: inout ControlFrameSequence.Iterator
    ) async throws -> ControlMessage {
        while let message = try await connection.nextMessage(&frames) {
            if message.type == type { return message }
        }
        throw PairingError(.unexpectedMessage, "the connection ended before a \(type.rawValue)")
    }

    @Test("a paired listener hears the status at once, then every change; an alert triggered arrives with evidence")
    func statusAndTrigger() async throws {
        let rig = try Rig()
        let listener = try DeviceIdentity.generate(now: Date())
        let connection = try await rig.harness.pairByPIN(listener, name: "Mum")
        var frames = connection.inbound.makeAsyncIterator()
        guard case .safetyStatus(let first) = try await Self.next(.safetyStatus, on: connection, &frames) else {
            throw PairingError(.unexpectedMessage, "no status")
        }
        #expect(first.monitoring == .paused && first.reason == "waiting for the camera")
        try await rig.activate()
        guard case .safetyStatus(let active) = try await Self.next(.safetyStatus, on: connection, &frames) else {
            throw PairingError(.unexpectedMessage, "no status")
        }
        #expect(active.monitoring == .active && active.seq > first.seq && active.faceVisible == nil)

        // How fast is alert-benchmark's to measure (a timed assertion here failed on a loaded machine at 1.09 s).
        let triggered = try await rig.harness.service.triggerAlert(.faceCovered).get()
        guard case .safetyAlert(let alert) = try await Self.next(.safetyAlert, on: connection, &frames) else {
            throw PairingError(.unexpectedMessage, "no alert")
        }
        #expect(alert == triggered)
        #expect(alert.kind == .faceCovered && alert.severity == .high && alert.confidence == 1)
        #expect(alert.detector == "trigger" && alert.evidence?.jpegBytes == rig.camera.evidence)
        await rig.stop()
    }

    @Test("camera unplugged: paused at once with the reason, and a trigger raises nothing and says why")
    func pausedNeverAlerts() async throws {
        let rig = try Rig()
        try await rig.activate()
        await rig.stopShowing()
        rig.camera.unplug("camera unplugged")
        try await eventually("the pause") {
            await rig.harness.event {
                if case .safetyStatus(let status) = $0 {
                    return status.monitoring == .paused && status.reason == "camera unplugged"
                }
                return false
            } != nil
        }
        let refused = await rig.harness.service.triggerAlert(.crying)
        #expect(throws: TriggerRefusal("monitoring is paused: camera unplugged")) { try refused.get() }
        #expect(try rig.harness.database.noiseEvents(afterSeq: 0, limit: 10).isEmpty, "nothing logged")
        await rig.stop()
    }

    @Test("ALERT_ACTION: every listener hears who is checking; a mute silences that kind for everyone")
    func actionsShared() async throws {
        let rig = try Rig()
        let mum = try await rig.harness.pairByPIN(try DeviceIdentity.generate(now: Date()), name: "Mum")
        let dad = try await rig.harness.pairByPIN(try DeviceIdentity.generate(now: Date()), name: "Dad")
        try await rig.activate()
        let alert = try await rig.harness.service.triggerAlert(.crying).get()
        try await mum.send(.alertAction(AlertAction(alertId: alert.alertId, action: .checking)))
        var dadFrames = dad.inbound.makeAsyncIterator()
        guard case .alertUpdated(let update) = try await Self.next(.alertUpdated, on: dad, &dadFrames) else {
            throw PairingError(.unexpectedMessage, "no update")
        }
        #expect(update.alertId == alert.alertId && update.state == .checking && update.by == "Mum")

        try await dad.send(.alertAction(AlertAction(alertId: alert.alertId, action: .mute)))
        var mumFrames = mum.inbound.makeAsyncIterator()
        var muted: AlertUpdated?
        while muted == nil {
            if case .alertUpdated(let next) = try await Self.next(.alertUpdated, on: mum, &mumFrames),
                next.state == .muted
            {
                muted = next
            }
        }
        #expect(muted?.by == "Dad" && muted.map { $0.mutedUntil! - $0.at } == 300_000)
        let refused = await rig.harness.service.triggerAlert(.crying)
        #expect(throws: TriggerRefusal("crying alerts are muted for 5 more minutes")) { try refused.get() }
        #expect((try? await rig.harness.service.triggerAlert(.stillness).get()) != nil, "other kinds still alert")

        try await mum.send(.alertAction(AlertAction(alertId: "no-such-alert", action: .okay)))
        guard case .error(let error) = try await Self.next(.error, on: mum, &mumFrames) else {
            throw PairingError(.unexpectedMessage, "no error")
        }
        #expect(error.errorCode == .protocolError && error.inReplyTo == "ALERT_ACTION")
        try await mum.send(.ping(Ping(timestamp: 9)))
        #expect(try await Self.next(.pong, on: mum, &mumFrames) == .pong(Ping(timestamp: 9)), "still open")
        await rig.stop()
    }

    @Test("EVENTS_SINCE replays alerts among noise events, in seq order, without their evidence")
    func replay() async throws {
        let rig = try Rig()
        let connection = try await rig.harness.pairByPIN(try DeviceIdentity.generate(now: Date()), name: "Mum")
        try await rig.activate()
        let noise = try await rig.harness.service.reportNoise(
            NoiseDetection(offsetMs: 0, peakLevel: 80, durationMs: 600))
        let alert = try await rig.harness.service.triggerAlert(.stillness).get()
        try await connection.send(.eventsSince(EventsSince(afterSeq: 0)))
        var frames = connection.inbound.makeAsyncIterator()
        var replayed: [ControlMessage] = []
        while replayed.count < 2, let message = try await connection.nextMessage(&frames) {
            switch message {
            case .noiseEvent(let event) where event.replayed == true: replayed.append(message)
            case .safetyAlert(let event) where event.replayed == true: replayed.append(message)
            default: continue
            }
        }
        guard case .noiseEvent(let first) = replayed.first, case .safetyAlert(let second) = replayed.last else {
            Issue.record("expected the noise then the alert: \(replayed)")
            return
        }
        #expect(first.seq == noise.seq && second.seq == alert.seq && second.seq == noise.seq + 1)
        #expect(second.evidence == nil && second.alertId == alert.alertId && second.kind == .stillness)
        await rig.stop()
    }

    @Test("crying in the microphone's audio becomes a crying alert while the camera watches")
    func crying() async throws {
        let rig = try Rig()
        try await rig.activate()
        let hearing = Task { await rig.harness.service.detectSound(from: TestSignalInput(.cry)) }
        try await eventually("a crying alert", timeout: .seconds(30)) {
            await rig.harness.event {
                if case .safetyAlert(let alert) = $0 { return alert.kind == .crying }
                return false
            } != nil
        }
        hearing.cancel()
        await rig.stop()
    }
}
