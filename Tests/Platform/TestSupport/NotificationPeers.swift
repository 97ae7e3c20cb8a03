public import Foundation
import Synchronization
import Testing

/// A private D-Bus session bus (`dbus-daemon` with its own config in a temporary directory), so tests never touch
/// the machine's buses and run in parallel.
public final class PrivateSessionBus: Sendable {
    public let directory: URL
    public let address: String
    private let daemon: Mutex<BackgroundProcess>

    private init(directory: URL, address: String, daemon: BackgroundProcess) {
        self.directory = directory
        self.address = address
        self.daemon = Mutex(daemon)
    }

    /// The environment a desktop session would give a program on this bus.
    public var environment: [String: String] { ["DBUS_SESSION_BUS_ADDRESS": address] }

    /// The environment of a systemd user session: the socket path only, without the daemon's GUID, so a program
    /// reaches the bus again after ``restart()``.
    public var socketEnvironment: [String: String] { ["DBUS_SESSION_BUS_ADDRESS": "unix:path=\(directory.path)/bus"] }

    private static func config(in directory: URL) -> URL { directory.appendingPathComponent("bus.conf") }

    public static func start() async throws -> PrivateSessionBus {
        let directory = try Subprocess.temporaryDirectory("dbus-bus")
        let (daemon, address) = try await launch(in: directory)
        return PrivateSessionBus(directory: directory, address: address, daemon: daemon)
    }

    /// Stops the daemon (every connection to it ends) and starts a new one on the same socket path.
    public func restart() async throws {
        await daemon.withLock { $0 }.stop()
        try? FileManager.default.removeItem(at: directory.appendingPathComponent("bus"))
        let (daemon, _) = try await Self.launch(in: directory)
        self.daemon.withLock { $0 = daemon }
    }

    private static func launch(in directory: URL) async throws -> (BackgroundProcess, String) {
        let config = config(in: directory)
        try """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>unix:path=\(directory.path)/bus</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
        </busconfig>
        """.write(to: config, atomically: true, encoding: .utf8)
        let daemon = try BackgroundProcess(
            "dbus-daemon", ["--config-file=\(config.path)", "--nofork", "--print-address=1"])
        let address: String
        do {
            address = try await daemon.ready("dbus-daemon (its address)") { $0.hasPrefix("unix:") }
        } catch {
            await daemon.stop()
            throw error
        }
        return (daemon, address)
    }

    public func stop() async {
        await daemon.withLock { $0 }.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// The independent notification server (`Tests/Interop/dbus/notification_server.py`, jeepney) on a bus.
public final class NotificationServer: Sendable {
    private let process: BackgroundProcess

    private init(process: BackgroundProcess) {
        self.process = process
    }

    public static func start(on bus: PrivateSessionBus, arguments: [String] = []) async throws -> NotificationServer {
        guard let python = InteropPeers.python else {
            throw NotificationPeerFailure(
                "the Python interop venv is missing (HOMEAPPS_PYTHON or .venv/bin/python); run `make test`")
        }
        let script = Fixtures.repositoryRoot.appendingPathComponent("Tests/Interop/dbus/notification_server.py").path
        let process = try BackgroundProcess(python, [script, "--address", bus.address] + arguments)
        do {
            try await process.ready("notification_server.py (jeepney==0.9.0 in the venv)") {
                $0.contains("\"event\": \"ready\"")
            }
        } catch {
            await process.stop()
            throw error
        }
        return NotificationServer(process: process)
    }

    /// The Notify calls the server recorded, as JSON objects.
    public var notifications: [[String: Any]] { events("notify") }

    /// Waits until the server has recorded `count` Notify calls.
    public func waitForNotifications(_ count: Int) async -> [[String: Any]] {
        await waitForEvents("notify", count)
    }

    /// The lines the server printed with `"event": event` (`notify`, `signal`, `clicked`), as JSON objects.
    public func events(_ event: String) -> [[String: Any]] {
        process.output.compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                object["event"] as? String == event
            else { return nil }
            return object
        }
    }

    /// Waits until the server has printed `count` lines with `"event": event`.
    public func waitForEvents(_ event: String, _ count: Int) async -> [[String: Any]] {
        _ = await process.line { _ in events(event).count >= count }
        return events(event)
    }

    public func stop() async {
        await process.stop()
    }
}

public struct NotificationPeerFailure: Error, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}

/// The tools these tests need; missing ones skip the test loudly, or fail it when the run requires interop
/// (`make test`, CI).
public enum NotificationTestTools {
    public static func available(for test: String, needsPython: Bool = true) -> Bool {
        var missing: [String] = []
        if (try? Subprocess.resolve("dbus-daemon")) == nil {
            missing.append("dbus-daemon (Debian package dbus-daemon)")
        }
        if needsPython, InteropPeers.python == nil {
            missing.append("the Python venv with jeepney==0.9.0 (make test)")
        }
        guard !missing.isEmpty else { return true }
        if InteropPeers.required {
            Issue.record("\(test) needs \(missing.joined(separator: ", "))")
        } else {
            FileHandle.standardError.write(
                Data(
                    "WARNING: SKIPPING \(test): missing \(missing.joined(separator: ", ")). Run `make test`.\n".utf8))
        }
        return false
    }
}
