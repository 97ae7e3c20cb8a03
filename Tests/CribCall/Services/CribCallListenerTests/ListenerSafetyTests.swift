import CanonicalJSON
import ControlTransport
import CribCallListener
import CribCallMonitor
import CribCallProtocol
import CribCallStore
import CribCallTestSupport
import DesktopNotifications
import DeviceIdentity
import Foundation
import SafetyDetection
import Synchronization
import TestSupport
import Testing

/// CribAlert between the monitor and listener services over the in-memory transport: what a parent sees of the
/// safety detections, and an action one parent takes reaching the other.
@Suite("Listener: safety status, alerts and actions")
struct ListenerSafetyTests {
    typealias Recorder = MonitorListenerTests.Recorder

    /// A monitor watching a camera twin, and `names` listeners paired by PIN and listening.
    struct Rig {
        let network = InMemoryNetwork()
        let monitor: MonitorListenerTests.Monitor
        let camera = TestCamera()
        /// The monitor's store (its settings).
        let database: CribCallDatabase
        let watching: Task<Void, Never>
        var listeners: [(service: ListenerService, heard: Recorder<ListenerEvent>, task: Task<Void, Never>)] = []

        init(names: [String]) async throws {
            let identity = try DeviceIdentity.generate(now: Date())
            database = try CribCallDatabase.inMemory()
            monitor = try MonitorListenerTests().startMonitor(network, identity: identity, database: database)
            let service = monitor.service
            let camera = camera
            watching = Task { await service.watchSafety(camera: camera) }
            for name in names {
                let listenerIdentity = try DeviceIdentity.generate(now: Date())
                let listener = ListenerService(
                    identity: listenerIdentity, name: name, database: try CribCallDatabase.inMemory(),
                    connector: network.connector(identity: PeerCertificate(identity: listenerIdentity)))
                let events = monitor.events
                // The PIN shown for this pairing: the newest one.
                @Sendable func pins() -> [String] {
                    events.all.compactMap { if case .pin(let pin, _, _, _) = $0 { pin } else { nil } }
                }
                let before = pins().count
                _ = try await listener.pairWithPIN(host: "nursery", port: 48080, fingerprint: identity.fingerprint) {
                    _ in
                    _ = await events.wait { _ in pins().count > before }
                    return pins().last
                }
                let heard = Recorder<ListenerEvent>()
                let task = Task { for await event in await listener.listen() { heard.append(event) } }
                listeners.append((listener, heard, task))
                #expect(await heard.wait { if case .connected = $0 { true } else { false } } != nil)
            }
        }

        func stop() async {
            await camera.stopShowing()
            for listener in listeners { listener.task.cancel() }
            watching.cancel()
            await monitor.listener.shutdown()
        }
    }

    @Test("the listener shows the status as it changes and an alert with its evidence, in calm words, once")
    func statusAndAlert() async throws {
        let rig = try await Rig(names: ["Mum"])
        let heard = rig.listeners[0].heard
        rig.camera.keepShowing()
        let active = await heard.wait {
            if case .safetyStatus(_, _, let status) = $0 { return status.monitoring == .active }
            return false
        }
        #expect(
            active?.text.hasPrefix("Monitor at nursery: Monitoring active") == true,
            "\(String(describing: active?.text))")
        let alert = try await rig.monitor.service.triggerAlert(.faceCovered).get()
        let shown = await heard.wait {
            if case .safetyAlert(_, _, let heard) = $0 { return heard.alertId == alert.alertId }
            return false
        }
        let event = try #require(shown)
        #expect(event.text.contains("SAFETY ALERT") && event.text.contains("Baby's face may be covered"))
        #expect(event.json["evidence"]?["jpeg"]?.stringValue?.isEmpty == false)
        #expect(event.desktopNotification?.urgency == .critical)
        await rig.camera.stopShowing()
        rig.camera.unplug("camera unplugged")
        let paused = await heard.wait {
            if case .safetyStatus(_, _, let status) = $0 {
                return status.monitoring == .paused && status.reason == "camera unplugged"
            }
            return false
        }
        #expect(paused?.text.contains("Monitoring paused: camera unplugged") == true)
        #expect(paused?.desktopNotification != nil, "a monitor that stopped judging is worth a bubble")
        #expect(heard.all.filter { if case .safetyAlert = $0 { true } else { false } }.count == 1)
        await rig.stop()
    }

    @Test(
        "monitoring switched off at the monitor: each parent is told once, in words and a bubble that stays; on again: told, and alerts come"
    )
    func monitoringSwitched() async throws {
        let rig = try await Rig(names: ["Mum", "Dad"])
        rig.camera.keepShowing()
        func monitoring(_ state: MonitoringSwitch, changed: Bool) -> (ListenerEvent) -> Bool {
            {
                if case .monitoring(_, _, state, changed) = $0 { return true }
                return false
            }
        }
        func switchTo(_ on: Bool) async throws {
            try rig.database.updateMonitorSettings { $0.monitoring = on }
            await rig.monitor.service.applyStoredSettings()
        }
        for listener in rig.listeners {
            #expect(await listener.heard.wait(for: monitoring(.on, changed: false)) != nil, "\(listener.heard.all)")
        }
        try await switchTo(false)
        for listener in rig.listeners {
            let off = try #require(await listener.heard.wait(for: monitoring(.off, changed: true)))
            #expect(
                off.text == "⚠️  Monitoring is OFF at \"Monitor at nursery\": no alert can come from it until "
                    + "someone starts monitoring there.", "\(off.text)")
            let bubble = try #require(off.desktopNotification)
            #expect(bubble.summary == "Monitoring is off at Monitor at nursery" && bubble.expiration == .never)
            #expect(off.json["monitoring"]?.stringValue == "off" && off.json["event"]?.stringValue == "monitoring")
        }
        guard case .failure(let refusal) = await rig.monitor.service.triggerAlert(.crying) else {
            Issue.record("an alert was raised while monitoring was off")
            return
        }
        #expect(refusal.description == "monitoring is turned off")
        try await switchTo(true)
        for listener in rig.listeners {
            let on = try #require(await listener.heard.wait(for: monitoring(.on, changed: true)))
            #expect(on.text == "Monitoring is back ON at \"Monitor at nursery\".")
        }
        try await eventually("monitoring active again") {
            await rig.monitor.service.safetyStatus?.monitoring == .active
        }
        let alert = try await rig.monitor.service.triggerAlert(.crying).get()
        let heard = await rig.listeners[1].heard.wait {
            if case .safetyAlert(_, _, let heard) = $0 { return heard.alertId == alert.alertId }
            return false
        }
        #expect(heard != nil)
        for listener in rig.listeners {
            let said = listener.heard.all.filter { if case .monitoring = $0 { true } else { false } }
            #expect(said.count == 3, "once each: on, off, back on — \(said)")
        }
        await rig.stop()
    }

    @Test("one parent says they are checking; the other parent's listener shows it, by name")
    func actionReachesTheOther() async throws {
        let rig = try await Rig(names: ["Mum", "Dad"])
        rig.camera.keepShowing()
        try await eventually("monitoring active") {
            await rig.monitor.service.safetyStatus?.monitoring == .active
        }
        let alert = try await rig.monitor.service.triggerAlert(.crying).get()
        let monitorId = try #require(
            await rig.listeners[0].heard.wait { if case .safetyAlert = $0 { true } else { false } }
                .flatMap { if case .safetyAlert(let id, _, _) = $0 { id } else { nil } })
        try await rig.listeners[0].service.act(.checking, on: alert.alertId, monitorId: monitorId)
        let update = await rig.listeners[1].heard.wait {
            if case .alertUpdated(_, _, let update) = $0 { return update.alertId == alert.alertId }
            return false
        }
        #expect(update?.text == "Monitor at nursery: Mum is checking.", "\(String(describing: update?.text))")
        await rig.stop()
    }

    @Test("buttons on an alert's notification: a click on \"I am checking\" reaches the other parent; \"View\" opens")
    func notificationButtons() async throws {
        let rig = try await Rig(names: ["Mum", "Dad"])
        rig.camera.keepShowing()
        try await eventually("monitoring active") {
            await rig.monitor.service.safetyStatus?.monitoring == .active
        }
        let presenter = RecordingNotificationPresenter()
        let failures = Recorder<String>()
        let controls = StreamControls(
            service: rig.listeners[0].service, mediaType: .audio, monitorId: nil
        ) { failures.append($0) }
        let following = Task { await controls.follow(clicks: presenter.actionInvocations()) }
        defer { following.cancel() }

        let alert = try await rig.monitor.service.triggerAlert(.faceCovered).get()
        let heard = try #require(
            await rig.listeners[0].heard.wait {
                if case .safetyAlert(_, _, let heard) = $0 { return heard.alertId == alert.alertId }
                return false
            })
        let bubble = try #require(heard.desktopNotification)
        #expect(bubble.actions.map(\.label) == ["View live camera", "I am checking", "Mark as okay"])
        try await presenter.notify(bubble)
        #expect(await presenter.click(key: "mute", tag: bubble.tag) == nil, "no mute button on a covered face")
        let click = try #require(await presenter.click(key: "checking", tag: bubble.tag))
        let parsed = try #require(ListenerEvent.alertButton(clicked: click))
        #expect(parsed.button == .checking && parsed.alertId == alert.alertId)
        let update = await rig.listeners[1].heard.wait {
            if case .alertUpdated(_, _, let update) = $0 { return update.alertId == alert.alertId }
            return false
        }
        #expect(update?.text == "Monitor at nursery: Mum is checking.", "\(String(describing: update?.text))")

        // "View live camera" opens a stream of that monitor (this in-memory monitor has no media: it says why not).
        #expect(await presenter.click(key: "view", tag: bubble.tag) != nil)
        let failure = await failures.wait { $0.contains("the stream did not open") }
        #expect(failure != nil, "\(failures.all)")

        let crying = try await rig.monitor.service.triggerAlert(.crying).get()
        let cryingBubble = try #require(
            await rig.listeners[0].heard.wait {
                if case .safetyAlert(_, _, let heard) = $0 { return heard.alertId == crying.alertId }
                return false
            }?.desktopNotification)
        #expect(cryingBubble.actions.map(\.label) == ["Open live view", "Mute for 5 minutes"])
        #expect(
            ListenerEvent.alertButton(
                clicked: .init(notificationId: 1, tag: "monitor/stream/s1", key: "view")) == nil,
            "a click on a bubble that is not an alert's")
        await rig.stop()
    }

    @Test("no user-facing word is medical: every alert, status and update text of CribAlert")
    func wordsAreObservational() {
        var texts: [String] = []
        for kind in SafetyAlertKind.known {
            let words = SafetyWording.alert(kind)
            texts += [words.title, words.detail, SafetyWording.tag(kind, severity: kind.severity)]
        }
        for monitoring in MonitoringState.allCases {
            for movement in MovementState.allCases {
                for position in SleepPosition.allCases {
                    texts.append(
                        SafetyWording.status(
                            monitoring, reason: nil, movement: movement, position: position, faceVisible: true))
                }
            }
        }
        texts += AlertState.allCases.map { SafetyWording.update($0, by: "Mum") }
        for text in texts {
            for term in SafetyWording.prohibitedTerms {
                #expect(!text.lowercased().contains(term), "\"\(text)\" contains \"\(term)\"")
            }
        }
    }
}
