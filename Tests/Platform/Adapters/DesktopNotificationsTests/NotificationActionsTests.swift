import Testing

@testable import DesktopNotifications

/// Which signals count as clicks, how actions are bounded, and how invocations reach their streams — without a bus.
@Suite("Notification actions")
struct NotificationActionsTests {
    typealias Invocation = DesktopNotification.Invocation

    static let owner = ":1.7"
    static let intruder = ":1.9"

    static func actionInvoked(_ id: UInt32, _ key: String, from sender: String? = owner) -> BusSignal {
        BusSignal(
            sender: sender, path: NotificationActionTracker.path, interface: NotificationActionTracker.service,
            member: "ActionInvoked", arguments: [.uint32(id), .string(key)])
    }

    static func closed(_ id: UInt32, from sender: String? = owner) -> BusSignal {
        BusSignal(
            sender: sender, path: NotificationActionTracker.path, interface: NotificationActionTracker.service,
            member: "NotificationClosed", arguments: [.uint32(id), .uint32(2)])
    }

    static func ownerChanged(from old: String, to new: String, sender: String = NotificationActionTracker.busName)
        -> BusSignal
    {
        BusSignal(
            sender: sender, path: NotificationActionTracker.busPath, interface: NotificationActionTracker.busName,
            member: "NameOwnerChanged",
            arguments: [.string(NotificationActionTracker.service), .string(old), .string(new)])
    }

    static func tracker() -> NotificationActionTracker {
        var tracker = NotificationActionTracker()
        tracker.connected(owner: owner)
        tracker.shown(id: 5, replacing: 0, tag: "monitor-1", keys: ["okay", "mute"], server: owner)
        return tracker
    }

    @Test("at most 3 actions, empty and repeated keys left out, keys and labels sanitised and cut to 64 bytes")
    func boundsActions() {
        let longKey = String(repeating: "k", count: 100)
        let actions = NotificationText.actions([
            .init(key: "", label: "no key"),
            .init(key: "\u{1B}\u{0}", label: "only controls"),
            .init(key: longKey, label: String(repeating: "👶", count: 20)),
            .init(key: longKey + "other", label: "same key once cut"),
            .init(key: "o\u{7}kay", label: "OK\u{0}"),
            .init(key: "mute", label: ""),
            .init(key: "fourth", label: "one too many"),
        ])
        #expect(actions.map(\.key) == [String(repeating: "k", count: 61) + "…", "okay", "mute"])
        #expect(actions.map(\.label) == [String(repeating: "👶", count: 15) + "…", "OK", ""])
        #expect(actions.allSatisfy { $0.key.utf8.count <= 64 && $0.label.utf8.count <= 64 })
        #expect(NotificationText.actions([]).isEmpty)
    }

    @Test("a click from the owner on an open notification that offered the key is an invocation with its tag")
    func acceptsClick() {
        var tracker = Self.tracker()
        #expect(
            tracker.received(Self.actionInvoked(5, "mute"))
                == Invocation(notificationId: 5, tag: "monitor-1", key: "mute"))
        // Resident notifications can be clicked again until they are closed.
        #expect(tracker.received(Self.actionInvoked(5, "okay"))?.key == "okay")
    }

    @Test(
        "signals that are not a click on an open notification of ours are ignored",
        arguments: [
            ("another connection", actionInvoked(5, "okay", from: intruder)),
            ("no sender", actionInvoked(5, "okay", from: nil)),
            ("an id never shown", actionInvoked(6, "okay")),
            ("a key not offered", actionInvoked(5, "delete")),
            (
                "another path",
                BusSignal(
                    sender: owner, path: "/", interface: NotificationActionTracker.service, member: "ActionInvoked",
                    arguments: [.uint32(5), .string("okay")])
            ),
            (
                "another interface",
                BusSignal(
                    sender: owner, path: NotificationActionTracker.path, interface: "org.example.Notifications",
                    member: "ActionInvoked", arguments: [.uint32(5), .string("okay")])
            ),
            (
                "signature (ss)",
                BusSignal(
                    sender: owner, path: NotificationActionTracker.path, interface: NotificationActionTracker.service,
                    member: "ActionInvoked", arguments: [.string("5"), .string("okay")])
            ),
            (
                "signature (us…) with more",
                BusSignal(
                    sender: owner, path: NotificationActionTracker.path, interface: NotificationActionTracker.service,
                    member: "ActionInvoked", arguments: [.uint32(5), .string("okay"), .string("x")])
            ),
            (
                "arguments of other types",
                BusSignal(
                    sender: owner, path: NotificationActionTracker.path, interface: NotificationActionTracker.service,
                    member: "ActionInvoked", arguments: nil)
            ),
            (
                "the activation token signal",
                BusSignal(
                    sender: owner, path: NotificationActionTracker.path, interface: NotificationActionTracker.service,
                    member: "ActivationToken", arguments: [.uint32(5), .string("okay")])
            ),
        ])
    func ignores(_ what: String, _ signal: BusSignal) {
        var tracker = Self.tracker()
        #expect(tracker.received(signal) == nil, "\(what)")
        #expect(tracker.received(Self.actionInvoked(5, "okay")) != nil, "the genuine click still counts")
    }

    @Test("after NotificationClosed, a replacement or a new connection the old id is forgotten")
    func forgets() {
        var closed = Self.tracker()
        #expect(closed.received(Self.closed(5, from: Self.intruder)) == nil)
        #expect(closed.received(Self.actionInvoked(5, "okay")) != nil, "only the owner closes")
        _ = closed.received(Self.closed(5))
        #expect(closed.received(Self.actionInvoked(5, "okay")) == nil)
        #expect(closed.openCount == 0)

        var replaced = Self.tracker()
        replaced.shown(id: 8, replacing: 5, tag: "monitor-1", keys: ["okay"], server: Self.owner)
        #expect(replaced.received(Self.actionInvoked(5, "okay")) == nil)
        #expect(replaced.received(Self.actionInvoked(8, "okay"))?.notificationId == 8)
        replaced.shown(id: 8, replacing: 8, tag: "monitor-1", keys: [], server: Self.owner)
        #expect(replaced.received(Self.actionInvoked(8, "okay")) == nil, "the replacement offers no actions")

        var reconnected = Self.tracker()
        reconnected.connected(owner: Self.owner)
        #expect(reconnected.received(Self.actionInvoked(5, "okay")) == nil)
    }

    @Test("the owner follows the bus's NameOwnerChanged; a new server cannot click the old server's ids")
    func followsOwner() {
        var tracker = Self.tracker()
        let forged = Self.ownerChanged(from: Self.owner, to: Self.intruder, sender: Self.intruder)
        #expect(tracker.received(forged) == nil)
        #expect(tracker.owner == Self.owner, "only the bus says who owns the name")

        _ = tracker.received(Self.ownerChanged(from: Self.owner, to: ""))
        #expect(tracker.owner == nil)
        #expect(tracker.received(Self.actionInvoked(5, "okay")) == nil)
        _ = tracker.received(Self.ownerChanged(from: "", to: ":1.12"))
        #expect(tracker.owner == ":1.12")
        #expect(tracker.received(Self.actionInvoked(5, "okay", from: ":1.12")) == nil, "id 5 was the old server's")
        tracker.shown(id: 5, replacing: 5, tag: nil, keys: ["okay"], server: ":1.12")
        #expect(
            tracker.received(Self.actionInvoked(5, "okay", from: ":1.12"))
                == Invocation(notificationId: 5, tag: nil, key: "okay"))

        // The server that answered Notify counts, even when the news of the new owner is still on its way.
        var early = NotificationActionTracker()
        early.connected(owner: nil)
        early.shown(id: 1, replacing: 0, tag: nil, keys: ["okay"], server: ":1.20")
        #expect(early.received(Self.actionInvoked(1, "okay", from: ":1.20")) == nil, "not the owner yet")
        _ = early.received(Self.ownerChanged(from: "", to: ":1.20"))
        #expect(early.received(Self.actionInvoked(1, "okay", from: ":1.20")) != nil)
    }

    @Test("at most 256 notifications are remembered; the oldest is forgotten first")
    func boundsOpen() {
        var tracker = NotificationActionTracker()
        tracker.connected(owner: Self.owner)
        for id in 1...UInt32(NotificationActionTracker.maximumOpen + 1) {
            tracker.shown(id: id, replacing: 0, tag: nil, keys: ["okay"], server: Self.owner)
        }
        #expect(tracker.openCount == NotificationActionTracker.maximumOpen)
        #expect(tracker.received(Self.actionInvoked(1, "okay")) == nil)
        #expect(tracker.received(Self.actionInvoked(2, "okay")) != nil)
        #expect(tracker.received(Self.actionInvoked(UInt32(NotificationActionTracker.maximumOpen + 1), "okay")) != nil)
    }

    @Test("every stream gets every invocation, keeps the newest 16 unread, and ends when the presenter finishes")
    func broadcasts() async {
        let broadcaster = InvocationBroadcaster()
        let first = broadcaster.stream()
        let second = broadcaster.stream()
        for id in 1...20 as ClosedRange<UInt32> {
            broadcaster.yield(Invocation(notificationId: id, tag: nil, key: "okay"))
        }
        broadcaster.finish()
        let expected = Array(5...20 as ClosedRange<UInt32>)
        #expect(await first.reduce(into: []) { $0.append($1.notificationId) } == expected)
        #expect(await second.reduce(into: []) { $0.append($1.notificationId) } == expected)
        #expect(await broadcaster.stream().reduce(0) { count, _ in count + 1 } == 0, "a later stream ends at once")
    }

    @Test("at most 64 streams are open at once; a further one ends at once, a freed slot is reused")
    func boundsStreams() async {
        let broadcaster = InvocationBroadcaster()
        var streams = (0..<InvocationBroadcaster.maximumStreams).map { _ in broadcaster.stream() }
        let refused = broadcaster.stream()
        #expect(await refused.reduce(0) { count, _ in count + 1 } == 0)
        streams.removeLast()  // its termination frees the slot
        let accepted = broadcaster.stream()
        broadcaster.yield(Invocation(notificationId: 1, tag: nil, key: "okay"))
        broadcaster.finish()
        #expect(await accepted.reduce(0) { count, _ in count + 1 } == 1)
        #expect(streams.count == InvocationBroadcaster.maximumStreams - 1)
    }

    @Test("the recording presenter's click yields on every stream, only for a shown notification offering the key")
    func recordingClick() async throws {
        let presenter = RecordingNotificationPresenter()
        let first = presenter.actionInvocations()
        let second = presenter.actionInvocations()
        let buttons = [DesktopNotification.Action(key: "okay", label: "OK")]
        let tagged = try await presenter.notify(DesktopNotification(summary: "A", tag: "monitor-1", actions: buttons))
        let untagged = try await presenter.notify(DesktopNotification(summary: "B", actions: buttons))
        _ = try await presenter.notify(DesktopNotification(summary: "C", tag: "monitor-2"))

        #expect(await presenter.click(key: "mute", tag: "monitor-1") == nil, "not offered")
        #expect(await presenter.click(key: "okay", tag: "monitor-3") == nil, "not shown")
        #expect(await presenter.click(key: "okay") == nil, "the latest one offers no actions")
        let clicked = await presenter.click(key: "okay", tag: "monitor-1")
        #expect(clicked == Invocation(notificationId: tagged, tag: "monitor-1", key: "okay"))
        _ = try await presenter.notify(DesktopNotification(summary: "D", actions: buttons))
        let latest = await presenter.click(key: "okay")
        #expect(latest?.tag == nil && latest?.notificationId != untagged)

        for stream in [first, second] {
            var iterator = stream.makeAsyncIterator()
            #expect(await iterator.next() == clicked)
            #expect(await iterator.next() == latest)
        }
    }
}
