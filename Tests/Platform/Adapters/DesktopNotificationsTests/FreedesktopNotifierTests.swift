import Foundation
import TestSupport
import Testing

@testable import DesktopNotifications

#if canImport(Glibc)
    import Glibc
#endif

/// The notifier against an independent notification server (jeepney) on a private dbus-daemon.
@Suite("FreedesktopNotifier", .serialized, .heavy("private D-Bus daemons and a jeepney notification server"))
struct FreedesktopNotifierTests {
    /// "Does not hang": far below libdbus's own 25 s default, with room for a loaded 2-core machine running the
    /// whole suite (measured durations belong in benchmarks, not here).
    static let noHang = Duration.seconds(8)

    @Test("a notification arrives with app name, icon, text, urgency and category hints, and its id is returned")
    func notifyArrives() async throws {
        guard NotificationTestTools.available(for: "notifyArrives") else { return }
        let bus = try await PrivateSessionBus.start()
        let server = try await NotificationServer.start(on: bus)
        let notifier = try await FreedesktopNotifier.connect(environment: bus.environment)
        #expect(notifier.server.name == "homeapps-test-server")
        #expect(notifier.server.specificationVersion == "1.2")
        #expect(notifier.capabilities.contains("body"))

        let id = try await notifier.notify(
            DesktopNotification(
                summary: "Noise from “Nursery”", body: "Peak level 0.82 (#7)", urgency: .critical, category: .device,
                tag: "monitor-1", expiration: .never))
        let received = try #require(await server.waitForNotifications(1).first)
        #expect(received["signature"] as? String == "susssasa{sv}i")
        #expect(received["app_name"] as? String == "CribCall")
        #expect(received["replaces_id"] as? Int == 0)
        #expect(received["app_icon"] as? String == "audio-input-microphone")
        #expect(received["summary"] as? String == "Noise from “Nursery”")
        #expect(received["body"] as? String == "Peak level 0.82 (#7)")
        #expect((received["actions"] as? [Any])?.isEmpty == true)
        let hints = try #require(received["hints"] as? [String: [Any]])
        #expect(hints["urgency"]?.first as? String == "y")
        #expect(hints["urgency"]?.last as? Int == 2)
        #expect(hints["category"]?.first as? String == "s")
        #expect(hints["category"]?.last as? String == "device")
        #expect(received["expire_timeout"] as? Int == 0)
        #expect(received["id"] as? Int == Int(id))

        _ = try await notifier.notify(DesktopNotification(summary: "Link is back", expiration: .after(.seconds(5))))
        let second = try #require(await server.waitForNotifications(2).last)
        let secondHints = try #require(second["hints"] as? [String: [Any]])
        #expect(secondHints["urgency"]?.last as? Int == 1)
        #expect(secondHints["category"] == nil)
        #expect(second["expire_timeout"] as? Int == 5000)
        await server.stop()
        await bus.stop()
    }

    @Test("a notification with a tag replaces the previous one with that tag by the id the server returned")
    func replacesByTag() async throws {
        guard NotificationTestTools.available(for: "replacesByTag") else { return }
        let bus = try await PrivateSessionBus.start()
        let server = try await NotificationServer.start(on: bus)
        let notifier = try await FreedesktopNotifier.connect(environment: bus.environment)

        let first = try await notifier.notify(DesktopNotification(summary: "Noise #1", tag: "monitor-1"))
        let other = try await notifier.notify(DesktopNotification(summary: "Noise #1", tag: "monitor-2"))
        let second = try await notifier.notify(DesktopNotification(summary: "Noise #2", tag: "monitor-1"))
        let untagged = try await notifier.notify(DesktopNotification(summary: "Hello"))
        let received = await server.waitForNotifications(4)
        try #require(received.count == 4)
        #expect(received.map { $0["replaces_id"] as? Int } == [0, 0, Int(first), 0])
        #expect(second == first)
        #expect(Set([first, other, untagged]).count == 3)

        // Two notifications for one monitor sent at once still replace each other.
        async let a = notifier.notify(DesktopNotification(summary: "Noise #3", tag: "monitor-3"))
        async let b = notifier.notify(DesktopNotification(summary: "Noise #4", tag: "monitor-3"))
        let (idA, idB) = try await (a, b)
        #expect(idA == idB)
        await server.stop()
        await bus.stop()
    }

    @Test("control characters, NUL, invalid UTF-8 and overlong text are sanitised and bounded, never crash libdbus")
    func sanitisesText() async throws {
        guard NotificationTestTools.available(for: "sanitisesText") else { return }
        let bus = try await PrivateSessionBus.start()
        let server = try await NotificationServer.start(on: bus, arguments: ["--capabilities", "body,body-markup"])
        let notifier = try await FreedesktopNotifier.connect(environment: bus.environment)

        let invalid = String(decoding: [0x4E, 0xFF, 0xC3, 0x28, 0xED, 0xA0, 0x80, 0x21], as: UTF8.self)
        let summary = "Nur\u{0}sery\u{1B}[31m " + String(Unicode.Scalar(0xFFFF as UInt32)!) + invalid
        let body =
            "<b>Baby & co</b>\r\n" + String(repeating: "a", count: 1021) + "👶🏽" + String(repeating: "b", count: 4000)
        _ = try await notifier.notify(DesktopNotification(summary: summary, body: body, icon: "icon\u{7}"))
        let received = try #require(await server.waitForNotifications(1).first)
        let receivedSummary = try #require(received["summary"] as? String)
        #expect(receivedSummary == "Nursery[31m N\u{FFFD}\u{FFFD}(\u{FFFD}\u{FFFD}\u{FFFD}!")
        #expect(received["app_icon"] as? String == "icon")
        let receivedBody = try #require(received["body"] as? String)
        #expect(receivedBody.hasPrefix("&lt;b&gt;Baby &amp; co&lt;/b&gt;\naaa"))
        #expect(receivedBody.hasSuffix("a…"))  // the emoji would cross 1 KiB: cut before it, not inside it
        #expect(!receivedBody.contains("👶"))
        #expect(receivedBody.count < 1100)
        await server.stop()
        await bus.stop()
    }

    @Test("no session bus: connect fails at once with noSessionBus and a clear reason")
    func noSessionBus() async throws {
        let runtime = try Subprocess.temporaryDirectory("dbus-no-bus")
        defer { try? FileManager.default.removeItem(at: runtime) }
        for environment in [[:], ["XDG_RUNTIME_DIR": runtime.path], ["DBUS_SESSION_BUS_ADDRESS": "disabled:"]] {
            let start = ContinuousClock.now
            let error = await #expect(throws: DesktopNotificationError.self) {
                try await FreedesktopNotifier.connect(environment: environment)
            }
            #expect(error?.code == .noSessionBus)
            #expect(error?.message.contains("no D-Bus session bus") == true)
            #expect(ContinuousClock.now - start < Self.noHang)
        }
        // An address whose socket is gone (a stale session): noSessionBus, with libdbus's reason.
        let start = ContinuousClock.now
        let error = await #expect(throws: DesktopNotificationError.self) {
            try await FreedesktopNotifier.connect(
                environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=\(runtime.path)/missing"])
        }
        #expect(error?.code == .noSessionBus)
        #expect(error?.message.contains("cannot reach the D-Bus session bus") == true)
        #expect(ContinuousClock.now - start < Self.noHang)
    }

    @Test("a bus without a notification server: connect fails quickly with noNotificationService")
    func noNotificationService() async throws {
        guard NotificationTestTools.available(for: "noNotificationService", needsPython: false) else { return }
        let bus = try await PrivateSessionBus.start()
        let start = ContinuousClock.now
        let error = await #expect(throws: DesktopNotificationError.self) {
            try await FreedesktopNotifier.connect(environment: bus.environment)
        }
        #expect(error?.code == .noNotificationService)
        #expect(error?.message.contains("no desktop notification service") == true)
        #expect(ContinuousClock.now - start < Self.noHang)
        await bus.stop()
    }

    @Test("a server that never answers: notify fails within the bound, the caller's tasks keep running, backlog capped")
    func hungServerTimesOut() async throws {
        guard NotificationTestTools.available(for: "hungServerTimesOut") else { return }
        let bus = try await PrivateSessionBus.start()
        let server = try await NotificationServer.start(on: bus, arguments: ["--no-reply-to-notify"])
        let timeout = Duration.milliseconds(800)
        let notifier = try await FreedesktopNotifier.connect(environment: bus.environment, timeout: timeout)

        let ticks = Ticker()
        let ticking = Task {
            while !Task.isCancelled {
                await ticks.tick()
                try? await Task.sleep(for: .milliseconds(20))
            }
        }
        let start = ContinuousClock.now
        let error = await #expect(throws: DesktopNotificationError.self) {
            try await notifier.notify(DesktopNotification(summary: "Noise", tag: "monitor-1"))
        }
        let elapsed = ContinuousClock.now - start
        #expect(error?.code == .timedOut)
        #expect(elapsed >= timeout - .milliseconds(50))
        #expect(elapsed < timeout + Self.noHang)
        #expect(await ticks.count >= 10, "the cooperative pool kept running while libdbus waited")
        #expect(await server.waitForNotifications(1).count == 1, "the call did reach the server")

        // A burst behind a hung server: at most maximumPending wait, the rest fail at once with busy; all end in time.
        let burstStart = ContinuousClock.now
        let codes = await withTaskGroup(of: DesktopNotificationError.Code?.self) { group in
            for index in 0..<(FreedesktopNotifier.maximumPending + 3) {
                group.addTask {
                    do {
                        _ = try await notifier.notify(DesktopNotification(summary: "Noise \(index)"))
                        return nil
                    } catch let error as DesktopNotificationError {
                        return error.code
                    } catch {
                        return .failed
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(ContinuousClock.now - burstStart < timeout + Self.noHang)
        #expect(codes.filter { $0 == .busy }.count >= 3)
        #expect(codes.allSatisfy { $0 == .busy || $0 == .timedOut })
        ticking.cancel()
        await server.stop()
        await bus.stop()
    }

    @Test("a bus that accepts the connection but never answers: connect fails within the bound")
    func hungBusTimesOut() async throws {
        let directory = try Subprocess.temporaryDirectory("dbus-hung")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("bus").path
        let socket = try SilentUnixSocket(path: path)
        defer { socket.close() }
        let start = ContinuousClock.now
        let error = await #expect(throws: DesktopNotificationError.self) {
            try await FreedesktopNotifier.connect(
                environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=\(path)"], timeout: .milliseconds(500))
        }
        #expect(error?.code == .timedOut)
        #expect(ContinuousClock.now - start < Self.noHang)
    }
}

private actor Ticker {
    private(set) var count = 0

    func tick() {
        count += 1
    }
}

/// A listening Unix socket that never accepts: clients connect (the kernel queues them) and then hear nothing.
private struct SilentUnixSocket {
    let descriptor: Int32

    init(path: String) throws {
        descriptor = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in path.utf8.prefix(buffer.count - 1).enumerated() { buffer[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0, listen(descriptor, 8) == 0 else { throw NotificationPeerFailure("cannot listen on \(path)") }
    }

    func close() {
        _ = Glibc.close(descriptor)
    }
}
