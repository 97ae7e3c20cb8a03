import ControlTransport
import CribCallListener
import CribCallMonitor
import CribCallProtocol
import CribCallStore
import CribCallTestSupport
import DesktopNotifications
import DeviceIdentity
import Foundation
import SoundDetection
import StreamMedia
import Testing

/// A paired monitor and listener, both services running over the in-memory transport, each with its own in-memory
/// media engine; the monitor's automatic streams run on a manual clock.
struct StreamRig {
    typealias Recorder = MonitorListenerTests.Recorder

    let monitor: MonitorService
    let transport: InMemoryListener
    let monitorRun: Task<Void, Never>
    let monitorEvents = Recorder<MonitorEvent>()
    let monitorEngine = InMemoryMediaEngine()
    let monitorId: String
    let clock = ManualStreamClock()

    let listener: ListenerService
    let listenerId: String
    let listenerDatabase: CribCallDatabase
    let listenerEngine = InMemoryMediaEngine()
    let heard = Recorder<ListenerEvent>()
    let listening: Task<Void, Never>

    /// Starts both sides, pairs them by QR code and waits until the listener is connected and served.
    init(
        autoStream: AutoStreamMode = .none, autoStreamSec: Int = 10, onNoise: OnNoiseAction? = nil,
        listenerHasEngine: Bool = true, mediaStartTimeout: Duration = .seconds(15)
    ) async throws {
        let network = InMemoryNetwork()
        let monitorIdentity = try DeviceIdentity.generate(now: Date())
        monitorId = monitorIdentity.deviceId.uuidString.lowercased()
        let monitorDatabase = try CribCallDatabase.inMemory()
        try monitorDatabase.updateMonitorSettings {
            $0.autoStream = autoStream
            $0.autoStreamSec = autoStreamSec
        }
        transport = network.listen(port: 48080, identity: PeerCertificate(identity: monitorIdentity))
        let monitor = try MonitorService(
            identity: monitorIdentity, database: monitorDatabase, transport: transport,
            mediaEngine: monitorEngine, streamClock: clock)
        self.monitor = monitor
        let monitorEvents = monitorEvents
        monitorRun = Task {
            async let served: Void = monitor.run()
            for await event in monitor.events { monitorEvents.append(event) }
            await served
        }

        let listenerIdentity = try DeviceIdentity.generate(now: Date())
        listenerId = listenerIdentity.deviceId.uuidString.lowercased()
        listenerDatabase = try CribCallDatabase.inMemory()
        if let onNoise { try listenerDatabase.setListenerOnNoise(onNoise) }
        let listener = ListenerService(
            identity: listenerIdentity, name: "Phone", database: listenerDatabase,
            connector: network.connector(identity: PeerCertificate(identity: listenerIdentity)),
            mediaEngine: listenerHasEngine ? listenerEngine : nil,
            timings: .init(
                pingInterval: .milliseconds(200), linkTimeout: .seconds(5), mediaStartTimeout: mediaStartTimeout))
        self.listener = listener
        _ = try await listener.pairWithQR(qrText: await monitor.showQR(port: 48080).qrText, host: "nursery")

        let heard = heard
        listening = Task { for await event in await listener.listen() { heard.append(event) } }
        #expect(await heard.wait { if case .connected = $0 { true } else { false } } != nil)
        #expect(
            await monitorEvents.wait {
                if case .listenerConnected(_, _, true) = $0 { true } else { false }
            } != nil)
    }

    func stop() async {
        listening.cancel()
        await transport.shutdown()
        await monitorRun.value
    }

    /// The stream the monitor started automatically (from its `stream_started` event).
    func automaticStream() async -> String? {
        let started = await monitorEvents.wait {
            if case .streamStarted(_, _, _, true) = $0 { true } else { false }
        }
        if case .streamStarted(let sessionId, _, _, _)? = started { return sessionId }
        return nil
    }

    /// Waits until `peer` has `count` remote candidates (they arrive one message at a time).
    func waitForCandidates(_ peer: InMemoryMediaPeer, count: Int) async {
        for _ in 0..<500 where peer.remoteCandidates.count < count {
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Waits until `peer` has ended (its stop runs in a task of its own).
    func waitForEnd(_ peer: InMemoryMediaPeer) async {
        for _ in 0..<500 where peer.endReason == nil {
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    func count(_ events: [ListenerEvent], _ predicate: (ListenerEvent) -> Bool) -> Int {
        events.filter(predicate).count
    }
}

/// Live streams through both services (PROTOCOL.md §9): what the listener app does and what a parent sees.
@Suite("Listener and monitor services: live streams over the control channel")
struct ListenerStreamTests {
    @Test("openStream: offer, answer and candidates relayed exactly both ways; streamStarted when media flows")
    func openStream() async throws {
        let rig = try await StreamRig()
        let sessionId = try await rig.listener.openStream(monitorId: rig.monitorId, mediaType: .audioVideo)
        let started = await rig.heard.wait {
            $0
                == .streamStarted(
                    monitorId: rig.monitorId, sessionId: sessionId,
                    mediaType: .audioVideo)
        }
        #expect(started != nil)

        let sender = try #require(rig.monitorEngine.peers(sessionId: sessionId).first)
        let receiver = try #require(rig.listenerEngine.peers(sessionId: sessionId).first)
        await rig.waitForCandidates(sender, count: 3)
        await rig.waitForCandidates(receiver, count: 3)
        #expect(receiver.role == .receiver && receiver.mediaType == .audioVideo)
        #expect(receiver.remoteDescription == InMemoryMediaPeer.offerSDP(sessionId: sessionId, mediaType: .audioVideo))
        #expect(receiver.remoteCandidates == InMemoryMediaPeer.candidates(for: .sender))
        #expect(sender.remoteDescription == InMemoryMediaPeer.answerSDP(sessionId: sessionId, mediaType: .audioVideo))
        #expect(sender.remoteCandidates == InMemoryMediaPeer.candidates(for: .receiver))
        #expect(sender.isFlowing && receiver.isFlowing)
        #expect(
            rig.monitorEvents.all.contains(
                .streamStarted(
                    sessionId: sessionId, listenerId: rig.listenerId,
                    mediaType: .audioVideo, automatic: false)))
        await rig.stop()
    }

    @Test("a stream whose media never arrives ends after mediaStartTimeout, saying what to check; the monitor is told")
    func mediaThatNeverFlows() async throws {
        let rig = try await StreamRig(mediaStartTimeout: .milliseconds(300))
        rig.listenerEngine.blockMedia(true)
        let sessionId = try await rig.listener.openStream(monitorId: rig.monitorId, mediaType: .audio)
        let ended = await rig.heard.wait {
            if case .streamEnded(_, sessionId, let reason) = $0 {
                reason.hasPrefix("media_failed: no audio")
            } else {
                false
            }
        }
        #expect(ended != nil, "\(rig.heard.all)")
        #expect(!rig.heard.all.contains { if case .streamStarted = $0 { true } else { false } })
        let receiver = try #require(rig.listenerEngine.peers(sessionId: sessionId).first)
        await rig.waitForEnd(receiver)
        #expect(receiver.endReason == "stopped")
        #expect(
            await rig.monitorEvents.wait {
                if case .streamEnded(sessionId, _) = $0 { true } else { false }
            } != nil)
        #expect(await rig.listener.activeStreamIds.isEmpty)
        await rig.stop()
    }

    @Test("endStream from the listener, twice: the monitor stops its sender once; both sides report the end once")
    func endFromListener() async throws {
        let rig = try await StreamRig()
        let sessionId = try await rig.listener.openStream(monitorId: rig.monitorId, mediaType: .audio)
        #expect(await rig.heard.wait { if case .streamStarted = $0 { true } else { false } } != nil)
        await rig.listener.endStream(sessionId: sessionId)
        await rig.listener.endStream(sessionId: sessionId)

        let ended = MonitorEvent.streamEnded(sessionId: sessionId, reason: StreamEndReason.endedByListener)
        #expect(await rig.monitorEvents.wait { $0 == ended } != nil)
        let sender = try #require(rig.monitorEngine.peers(sessionId: sessionId).first)
        let receiver = try #require(rig.listenerEngine.peers(sessionId: sessionId).first)
        await rig.waitForEnd(sender)
        await rig.waitForEnd(receiver)
        #expect(sender.endReason == "stopped" && receiver.endReason == "stopped")
        #expect(await rig.monitor.activeStreams.isEmpty)
        #expect(await rig.listener.activeStreamIds.isEmpty)
        #expect(rig.monitorEvents.all.filter { $0 == ended }.count == 1)
        #expect(
            rig.count(rig.heard.all) {
                $0 == .streamEnded(monitorId: rig.monitorId, sessionId: sessionId, reason: "ended_by_listener")
            } == 1)
        await rig.stop()
    }

    @Test("the monitor ending a stream ends it on the listener (receiver stopped, streamEnded)")
    func endFromMonitor() async throws {
        let rig = try await StreamRig()
        let sessionId = try await rig.listener.openStream(monitorId: rig.monitorId, mediaType: .audio)
        #expect(await rig.heard.wait { if case .streamStarted = $0 { true } else { false } } != nil)
        await rig.monitor.endStream(sessionId: sessionId)
        #expect(
            await rig.heard.wait {
                $0 == .streamEnded(monitorId: rig.monitorId, sessionId: sessionId, reason: "ended_by_monitor")
            } != nil)
        let receiver = try #require(rig.listenerEngine.peers(sessionId: sessionId).first)
        await rig.waitForEnd(receiver)
        #expect(receiver.endReason == "stopped")
        #expect(await rig.listener.activeStreamIds.isEmpty)
        await rig.stop()
    }

    @Test("a fifth stream is refused with the monitor's reason; the four keep running")
    func fifthRefused() async throws {
        let rig = try await StreamRig()
        var opened: [String] = []
        for _ in 0..<4 { opened.append(try await rig.listener.openStream(monitorId: rig.monitorId, mediaType: .audio)) }
        let refusal = await #expect(throws: ListenerService.Failure.self) {
            try await rig.listener.openStream(monitorId: rig.monitorId, mediaType: .audio)
        }
        #expect(refusal?.description.contains("4") == true, "\(refusal?.description ?? "")")
        #expect(await rig.listener.activeStreamIds == opened.sorted())
        #expect(await rig.monitor.activeStreams.map(\.sessionId) == opened.sorted())
        await rig.stop()
    }

    @Test("openStream fails clearly without a media engine or a connection to that monitor")
    func openStreamFailures() async throws {
        let rig = try await StreamRig(listenerHasEngine: false)
        let noEngine = await #expect(throws: ListenerService.Failure.self) {
            try await rig.listener.openStream(monitorId: rig.monitorId, mediaType: .audio)
        }
        #expect(noEngine?.description.contains("media") == true)
        await rig.stop()

        let other = try await StreamRig()
        let unknown = await #expect(throws: ListenerService.Failure.self) {
            try await other.listener.openStream(monitorId: "not-a-paired-monitor", mediaType: .audio)
        }
        #expect(unknown?.description.contains("not connected") == true)
        await other.stop()
    }

    @Test("onNoise=notify (the default): the alert is shown and the monitor's automatic stream is ended at once")
    func autoStreamNotify() async throws {
        let rig = try await StreamRig(autoStream: .audio)
        #expect(try rig.listenerDatabase.listenerOnNoise() == .notify)
        let noise = try await rig.monitor.reportNoise(NoiseDetection(offsetMs: 0, peakLevel: 90, durationMs: 600))
        let sessionId = try #require(await rig.automaticStream())
        #expect(
            await rig.monitorEvents.wait {
                $0 == .streamEnded(sessionId: sessionId, reason: StreamEndReason.endedByListener)
            } != nil)
        #expect(
            await rig.heard.wait { if case .noise(_, _, let event) = $0 { event.seq == noise.seq } else { false } }
                != nil)
        #expect(rig.listenerEngine.peers.isEmpty, "no receiver for a stream the listener does not want")
        #expect(!rig.heard.all.contains { if case .streamStarted = $0 { true } else { false } })
        #expect(await rig.monitor.activeStreams.isEmpty)
        await rig.stop()
    }

    @Test("onNoise=open: the automatic stream plays, warns 5 s before its end and stops after autoStreamSec")
    func autoStreamOpenTimesOut() async throws {
        let rig = try await StreamRig(autoStream: .audio, autoStreamSec: 10, onNoise: .open)
        try await rig.monitor.reportNoise(NoiseDetection(offsetMs: 0, peakLevel: 90, durationMs: 600))
        let sessionId = try #require(await rig.automaticStream())
        #expect(
            await rig.heard.wait {
                $0 == .streamStarted(monitorId: rig.monitorId, sessionId: sessionId, mediaType: .audio)
            } != nil)
        rig.clock.advance(by: .seconds(5))
        #expect(
            await rig.heard.wait {
                $0 == .streamEndingSoon(monitorId: rig.monitorId, sessionId: sessionId, secondsRemaining: 5)
            } != nil)
        rig.clock.advance(by: .seconds(5))
        #expect(
            await rig.heard.wait {
                $0 == .streamEnded(monitorId: rig.monitorId, sessionId: sessionId, reason: "ended_by_monitor")
            } != nil)
        #expect(rig.monitorEvents.all.contains(.streamEnded(sessionId: sessionId, reason: StreamEndReason.timedOut)))
        let receiver = try #require(rig.listenerEngine.peers(sessionId: sessionId).first)
        await rig.waitForEnd(receiver)
        #expect(receiver.endReason == "stopped")
        await rig.stop()
    }

    @Test("onNoise=open with the monitor's auto-stream off: the listener opens a sound stream itself, once")
    func openOnNoiseWithoutAutoStream() async throws {
        let rig = try await StreamRig(autoStream: .none, onNoise: .open)
        try await rig.monitor.reportNoise(NoiseDetection(offsetMs: 0, peakLevel: 90, durationMs: 600))
        let started = await rig.heard.wait { if case .streamStarted = $0 { true } else { false } }
        guard case .streamStarted(let monitorId, let sessionId, let mediaType)? = started else {
            Issue.record("no stream opened on the noise: \(rig.heard.all)")
            await rig.stop()
            return
        }
        #expect(monitorId == rig.monitorId && mediaType == .audio)
        #expect(!rig.monitorEvents.all.contains { if case .streamStarted(_, _, _, true) = $0 { true } else { false } })
        // A second noise while it plays opens no second stream.
        try await rig.monitor.reportNoise(NoiseDetection(offsetMs: 0, peakLevel: 90, durationMs: 600))
        _ = await rig.heard.wait { if case .noise(_, _, let event) = $0 { event.seq == 2 } else { false } }
        try await Task.sleep(for: .milliseconds(300))
        #expect(await rig.monitor.activeStreams.count == 1, "one stream: \(sessionId)")
        await rig.stop()
    }

    @Test("onNoise=open and pinStream: the automatic stream stays past its time until the listener ends it")
    func autoStreamPinned() async throws {
        let rig = try await StreamRig(autoStream: .audio, autoStreamSec: 10, onNoise: .open)
        try await rig.monitor.reportNoise(NoiseDetection(offsetMs: 0, peakLevel: 90, durationMs: 600))
        let sessionId = try #require(await rig.automaticStream())
        #expect(await rig.heard.wait { if case .streamStarted = $0 { true } else { false } } != nil)
        rig.clock.advance(by: .seconds(5))
        #expect(await rig.heard.wait { if case .streamEndingSoon = $0 { true } else { false } } != nil)

        try await rig.listener.pinStream(sessionId: sessionId)
        for _ in 0..<500 where await rig.monitor.activeStreams.first?.autoStopAt != nil {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(await rig.monitor.activeStreams.first?.autoStopAt == nil, "the monitor got the PIN_STREAM")
        rig.clock.advance(by: .seconds(600))
        try await Task.sleep(for: .milliseconds(200))  // room for a wrongly armed timer to fire
        #expect(await rig.listener.activeStreamIds == [sessionId])
        #expect(!rig.heard.all.contains { if case .streamEnded = $0 { true } else { false } })

        await rig.listener.endStream(sessionId: sessionId)
        #expect(
            await rig.monitorEvents.wait {
                $0 == .streamEnded(sessionId: sessionId, reason: StreamEndReason.endedByListener)
            } != nil)
        await rig.stop()
    }

    @Test("losing the link ends the listener's streams (link_lost) and the monitor's (connection_closed)")
    func linkLossEndsStreams() async throws {
        let rig = try await StreamRig()
        let sessionId = try await rig.listener.openStream(monitorId: rig.monitorId, mediaType: .audio)
        #expect(await rig.heard.wait { if case .streamStarted = $0 { true } else { false } } != nil)
        await rig.transport.shutdown()
        #expect(
            await rig.heard.wait {
                $0 == .streamEnded(monitorId: rig.monitorId, sessionId: sessionId, reason: "link_lost")
            } != nil)
        #expect(
            await rig.monitorEvents.wait {
                $0 == .streamEnded(sessionId: sessionId, reason: StreamEndReason.connectionClosed)
            } != nil)
        let receiver = try #require(rig.listenerEngine.peers(sessionId: sessionId).first)
        await rig.waitForEnd(receiver)
        #expect(receiver.endReason == "stopped")
        #expect(await rig.listener.activeStreamIds.isEmpty)
        await rig.stop()
    }

    @Test("the onNoise setting is stored: notify until set, then what was set")
    func onNoiseSetting() throws {
        let database = try CribCallDatabase.inMemory()
        #expect(try database.listenerOnNoise() == .notify)
        try database.setListenerOnNoise(.open)
        #expect(try database.listenerOnNoise() == .open)
        try database.setListenerOnNoise(.notify)
        #expect(try database.listenerOnNoise() == .notify)
        #expect(try database.monitorSettings() == MonitorSettings.defaults, "monitor settings are untouched")
    }

    @Test("a stream ending soon gets its own normal-urgency bubble that expires with it; start and end get none")
    func notifications() throws {
        let soon = try #require(
            ListenerEvent.streamEndingSoon(monitorId: "m-1", sessionId: "s-1", secondsRemaining: 5)
                .desktopNotification)
        #expect(soon.urgency == .normal && soon.expiration == .after(.seconds(5)))
        #expect(soon.tag != nil && soon.tag != "m-1", "must not replace the monitor's alert bubble")
        #expect(soon.summary.contains("5 s"))
        #expect(
            ListenerEvent.streamStarted(monitorId: "m-1", sessionId: "s-1", mediaType: .audio)
                .desktopNotification == nil)
        #expect(
            ListenerEvent.streamEnded(monitorId: "m-1", sessionId: "s-1", reason: "ended_by_monitor")
                .desktopNotification == nil)
    }
}
