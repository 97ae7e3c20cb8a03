import Foundation
import TestSupport
import Testing

@testable import DesktopNotifications

/// Action buttons and clicks against an independent notification server (jeepney) on a private dbus-daemon.
///
/// The server's decoys (forged, malformed, unknown id, after close) reach the notifier before the genuine click, in
/// an order the bus guarantees (see `notification_server.py`), and use a key of their own: a decoy taken for a click
/// would be the first invocation, or show its key. So every wait here is for a genuine event, never a fixed pause.
@Suite("FreedesktopNotifier actions", .serialized, .heavy("private D-Bus daemons and a jeepney notification server"))
struct FreedesktopNotifierActionTests {
    /// A click normally arrives within milliseconds; this bound only keeps a broken run from hanging.
    static let clickArrives = Duration.seconds(20)

    typealias Invocation = DesktopNotification.Invocation

    static let buttons = [
        DesktopNotification.Action(key: "okay", label: "I'm on it"),
        DesktopNotification.Action(key: "mute", label: "Mute 10 min"),
    ]

    @Test("with the actions capability, at most 3 actions go out as the flat key/label list, sanitised and bounded")
    func actionsSent() async throws {
        guard NotificationTestTools.available(for: "actionsSent") else { return }
        let bus = try await PrivateSessionBus.start()
        let server = try await NotificationServer.start(on: bus, arguments: ["--capabilities", "body,actions"])
        let notifier = try await FreedesktopNotifier.connect(environment: bus.environment)
        #expect(notifier.capabilities.contains("actions"))

        let longLabel = String(repeating: "é", count: 40)  // 80 bytes
        _ = try await notifier.notify(
            DesktopNotification(
                summary: "Noise in Nursery",
                actions: [
                    .init(key: "okay", label: "I'm on it"),
                    .init(key: "", label: "no key: left out"),
                    .init(key: "check\u{0}ing", label: longLabel),
                    .init(key: "mute", label: "Mute\n10 min"),
                    .init(key: "fourth", label: "one too many"),
                ]))
        let received = try #require(await server.waitForNotifications(1).first)
        let actions = try #require(received["actions"] as? [String])
        let cutLabel = String(repeating: "é", count: 30) + "…"  // 60 + 3 bytes: the most whole characters in 64
        #expect(actions == ["okay", "I'm on it", "checking", cutLabel, "mute", "Mute\n10 min"])
        #expect(actions.allSatisfy { $0.utf8.count <= 64 })
        await server.stop()
        await bus.stop()
    }

    @Test("without the actions capability no actions are sent, and the notification still is")
    func actionsNotSentWithoutCapability() async throws {
        guard NotificationTestTools.available(for: "actionsNotSentWithoutCapability") else { return }
        let bus = try await PrivateSessionBus.start()
        let server = try await NotificationServer.start(on: bus, arguments: ["--click", "okay"])
        let notifier = try await FreedesktopNotifier.connect(environment: bus.environment)
        #expect(!notifier.capabilities.contains("actions"))

        let id = try await notifier.notify(DesktopNotification(summary: "Noise", actions: Self.buttons))
        let received = try #require(await server.waitForNotifications(1).first)
        #expect((received["actions"] as? [Any])?.isEmpty == true)
        #expect(received["summary"] as? String == "Noise")
        #expect(received["id"] as? Int == Int(id))
        #expect(server.events("clicked").isEmpty, "the server had no button to click")
        await server.stop()
        await bus.stop()
    }

    @Test(
        "a click arrives on every stream as an Invocation with the notification's id, tag and key",
        arguments: [
            // As gnome-shell and dunst send it: to the connection that called Notify.
            ("unicast", []),
            // Servers that broadcast: heard through the match rule.
            ("broadcast", ["--broadcast-signals"]),
            // Read by libdbus while it waited for the Notify reply: nothing else will wake the read source.
            ("unicast, sent before the Notify reply", ["--signals-before-reply"]),
        ])
    func clickArrives(_ delivery: String, _ serverArguments: [String]) async throws {
        guard NotificationTestTools.available(for: "clickArrives (\(delivery))") else { return }
        let broadcast = serverArguments.contains("--broadcast-signals")
        let bus = try await PrivateSessionBus.start()
        let server = try await NotificationServer.start(
            on: bus, arguments: ["--capabilities", "body,actions", "--click", "mute"] + serverArguments)
        let notifier = try await FreedesktopNotifier.connect(environment: bus.environment)
        let first = notifier.actionInvocations()
        let second = notifier.actionInvocations()

        let id = try await notifier.notify(
            DesktopNotification(summary: "Noise in Nursery", tag: "monitor-1", actions: Self.buttons))
        let expected = Invocation(notificationId: id, tag: "monitor-1", key: "mute")
        if serverArguments.contains("--signals-before-reply") {
            // Handled on the bus queue before notify returned (the id was known by then), not left in libdbus.
            #expect(notifier.router.openCount == 0, "NotificationClosed, read with the reply, was handled")
        }
        #expect(try await Self.first(1, of: first, "the click on the first stream") == [expected])
        #expect(try await Self.first(1, of: second, "the click on the second stream") == [expected])
        _ = await server.waitForEvents("clicked", 1)  // printed after the lines of the signals it sent
        let signals = server.events("signal")
        #expect(signals.map { $0["member"] as? String } == ["ActionInvoked", "NotificationClosed"])
        #expect(signals.allSatisfy { ($0["destination"] is NSNull) == broadcast })
        await server.stop()
        await bus.stop()
    }

    @Test("ActionInvoked forged by another connection, unicast or broadcast, is ignored")
    func forgedSignalIgnored() async throws {
        guard NotificationTestTools.available(for: "forgedSignalIgnored") else { return }
        let bus = try await PrivateSessionBus.start()
        let server = try await NotificationServer.start(
            on: bus,
            arguments: ["--capabilities", "body,actions", "--click", "okay", "--decoy", "mute", "--forge-first"])
        let notifier = try await FreedesktopNotifier.connect(environment: bus.environment)
        let invocations = notifier.actionInvocations()

        let id = try await notifier.notify(
            DesktopNotification(summary: "Noise", tag: "monitor-1", actions: Self.buttons))
        // The forged "mute" clicks reached the notifier before the genuine "okay": had one counted, it came first.
        #expect(
            try await Self.first(1, of: invocations, "the genuine click")
                == [Invocation(notificationId: id, tag: "monitor-1", key: "okay")])
        _ = await server.waitForEvents("clicked", 1)  // printed after the lines of the signals it sent
        let forged = server.events("signal").filter { $0["by"] as? String == "forger" }
        #expect(forged.count == 2, "the forger sent its unicast and its broadcast ActionInvoked")
        #expect(forged.allSatisfy { ($0["body"] as? [Any])?.last as? String == "mute" })
        await server.stop()
        await bus.stop()
    }

    @Test("ActionInvoked for an id never shown, with a wrong signature, or after NotificationClosed is ignored")
    func strayOwnerSignalsIgnored() async throws {
        guard NotificationTestTools.available(for: "strayOwnerSignalsIgnored") else { return }
        let bus = try await PrivateSessionBus.start()
        let server = try await NotificationServer.start(
            on: bus,
            arguments: [
                "--capabilities", "body,actions", "--click", "okay", "--decoy", "mute", "--unknown-id-first",
                "--malformed-first", "--click-after-close",
            ])
        let notifier = try await FreedesktopNotifier.connect(environment: bus.environment)
        let invocations = notifier.actionInvocations()

        let a = try await notifier.notify(
            DesktopNotification(summary: "Noise #1", tag: "monitor-1", actions: Self.buttons))
        let b = try await notifier.notify(DesktopNotification(summary: "Noise #2", actions: Self.buttons))
        // Each notification: decoys first, then the genuine click, NotificationClosed, and the click again.
        #expect(
            try await Self.first(2, of: invocations, "the genuine clicks on both notifications")
                == [
                    Invocation(notificationId: a, tag: "monitor-1", key: "okay"),
                    Invocation(notificationId: b, tag: nil, key: "okay"),
                ])
        _ = await server.waitForEvents("clicked", 2)  // printed after the lines of the signals it sent
        let sent = server.events("signal")
        #expect(sent.count == 12, "each click: unknown id, (ss), (u), genuine, closed, again after close")
        #expect(
            sent.filter { ($0["body"] as? [Any])?.first as? Int ?? 0 > 1_000_000 }.count == 2, "ids never shown")
        await server.stop()
        await bus.stop()
    }

    @Test("a notification server that restarts is heard again: the owner follows NameOwnerChanged")
    func restartedServerHeard() async throws {
        guard NotificationTestTools.available(for: "restartedServerHeard") else { return }
        let bus = try await PrivateSessionBus.start()
        let first = try await NotificationServer.start(on: bus, arguments: ["--capabilities", "body,actions"])
        let notifier = try await FreedesktopNotifier.connect(environment: bus.environment)
        let invocations = notifier.actionInvocations()
        _ = try await notifier.notify(DesktopNotification(summary: "Noise #1", tag: "monitor-1", actions: Self.buttons))
        await first.stop()

        let second = try await NotificationServer.start(
            on: bus, arguments: ["--capabilities", "body,actions", "--click", "okay"])
        let id = try await notifier.notify(
            DesktopNotification(summary: "Noise #2", tag: "monitor-1", actions: Self.buttons))
        #expect(
            try await Self.first(1, of: invocations, "the click from the new server")
                == [Invocation(notificationId: id, tag: "monitor-1", key: "okay")])
        await second.stop()
        await bus.stop()
    }

    @Test("after the bus restarts, the notifier reconnects, adds its match rule and asks for the owner again")
    func reconnects() async throws {
        guard NotificationTestTools.available(for: "reconnects") else { return }
        let bus = try await PrivateSessionBus.start()
        let arguments = ["--capabilities", "body,actions", "--click", "okay", "--broadcast-signals"]
        let first = try await NotificationServer.start(on: bus, arguments: arguments)
        let notifier = try await FreedesktopNotifier.connect(environment: bus.socketEnvironment)
        let invocations = notifier.actionInvocations()
        let before = try await notifier.notify(DesktopNotification(summary: "Noise #1", actions: Self.buttons))
        #expect(
            try await Self.first(1, of: invocations, "the click before the restart")
                == [Invocation(notificationId: before, tag: nil, key: "okay")])
        await first.stop()

        try await bus.restart()
        let second = try await NotificationServer.start(on: bus, arguments: arguments)
        // The notifier may learn of the lost connection only from this call (then it fails); the next one reconnects.
        let id: UInt32
        do {
            id = try await notifier.notify(DesktopNotification(summary: "Noise #2", actions: Self.buttons))
        } catch let error as DesktopNotificationError {
            #expect(error.code == .failed || error.code == .noSessionBus, "\(error)")
            id = try await notifier.notify(DesktopNotification(summary: "Noise #2", actions: Self.buttons))
        }
        // Broadcast: heard only through the match rule of the new connection, from the owner it asked the new bus for.
        #expect(
            try await Self.first(1, of: invocations, "the click after the restart")
                == [Invocation(notificationId: id, tag: nil, key: "okay")])
        await second.stop()
        await bus.stop()
    }

    /// The first `count` invocations of `stream`, failing with what was awaited after ``clickArrives``.
    static func first(_ count: Int, of stream: AsyncStream<Invocation>, _ what: String) async throws -> [Invocation] {
        try await withTimeout(clickArrives, what) {
            var received: [Invocation] = []
            for await invocation in stream {
                received.append(invocation)
                if received.count == count { break }
            }
            return received
        }
    }
}
