import CribCallListener
import CribCallProtocol
import DesktopNotifications
import Testing

/// What a parent sees on the desktop for each listener event.
@Suite("Listener desktop notifications")
struct ListenerNotificationTests {
    let noise = NoiseEvent(
        monitorId: "m-1", timestamp: 1_700_000_000_000, peakLevel: 84, seq: 7,
        eventId: "e-7", kind: "noise")

    @Test("alerts and a lost link are critical and stay; the all-clear expires; a routine connection says nothing")
    func mapping() throws {
        let alert = try #require(
            ListenerEvent.noise(monitorId: "m-1", monitorName: "Nursery", event: noise)
                .desktopNotification)
        #expect(alert.urgency == .critical && alert.expiration == .never && alert.tag == "m-1")
        #expect(alert.summary == "Noise in Nursery" && alert.body.contains("peak level 84"))

        var replayed = noise
        replayed.replayed = true
        let missed = try #require(
            ListenerEvent.noise(monitorId: "m-1", monitorName: "Nursery", event: replayed)
                .desktopNotification)
        #expect(missed.summary == "Missed alert from Nursery")

        let lost = try #require(
            ListenerEvent.linkLost(monitorId: "m-1", monitorName: "Nursery", reason: "silence")
                .desktopNotification)
        #expect(lost.urgency == .critical && lost.category == .networkDisconnected && lost.tag == "m-1")

        let back = try #require(
            ListenerEvent.linkRestored(monitorId: "m-1", monitorName: "Nursery").desktopNotification)
        #expect(back.urgency == .normal && back.expiration == .after(.seconds(10)) && back.tag == "m-1")

        let refused = try #require(
            ListenerEvent.unauthorized(
                monitorId: "m-1", monitorName: "Nursery",
                message: "revoked"
            ).desktopNotification)
        #expect(refused.urgency == .critical && refused.body.contains("Pair again"))

        #expect(
            ListenerEvent.connected(monitorId: "m-1", monitorName: "Nursery", address: "10.0.0.2:48080")
                .desktopNotification == nil)
    }

    @Test("one monitor's notifications replace each other; another monitor gets its own")
    func replacement() async throws {
        let presenter = RecordingNotificationPresenter()
        let events: [ListenerEvent] = [
            .noise(monitorId: "m-1", monitorName: "Nursery", event: noise),
            .linkLost(monitorId: "m-1", monitorName: "Nursery", reason: "silence"),
            .noise(monitorId: "m-2", monitorName: "Guest room", event: noise),
            .linkRestored(monitorId: "m-1", monitorName: "Nursery"),
        ]
        for event in events {
            if let notification = event.desktopNotification { _ = try await presenter.notify(notification) }
        }
        let shown = await presenter.shown
        #expect(shown.count == 4)
        #expect(shown[1].replacesID == shown[0].id && shown[3].replacesID == shown[0].id)
        #expect(shown[2].replacesID == 0)
    }
}
