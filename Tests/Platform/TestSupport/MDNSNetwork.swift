import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A hermetic two-host LAN for discovery and end-to-end tests: network namespaces A (10.78.0.1) and B
/// (10.78.0.2) joined by a veth pair — or, `withRouter`, each joined to a bridge in a third namespace R, the home
/// router (10.78.0.254, the hosts' default route) standing for the way to the internet (it also holds
/// ``internetAddress``, a server "out there") — and in the chosen namespaces a private D-Bus system bus (socket in a temp directory) plus an
/// avahi-daemon bound to it. Nothing touches the host's network, bus or /run: avahi runs in the mount namespace
/// `ip netns exec` creates, on a private tmpfs /run. Everything is removed again by ``with(avahiIn:_:)``.
public final class MDNSNetwork: Sendable {
    public static let addressA = "10.78.0.1"
    public static let addressB = "10.78.0.2"
    /// The LAN's subnet.
    public static let subnet = "10.78.0.0/24"
    /// The router's address on the LAN (the hosts' default route), with a router.
    public static let routerAddress = "10.78.0.254"
    /// An address beyond the router (TEST-NET-3, RFC 5737), held by the router namespace: a server on the internet.
    public static let internetAddress = "203.0.113.1"

    /// The namespace names (`r`, the router's, only with a router).
    public let a: String
    public let b: String
    public let r: String?
    private let directory: URL

    private init(tag: String, directory: URL, router: Bool) {
        a = "sd\(tag)a"
        b = "sd\(tag)b"
        r = router ? "sd\(tag)r" : nil
        self.directory = directory
    }

    /// Every namespace of this network.
    public var namespaces: [String] { [a, b] + (r.map { [$0] } ?? []) }

    /// Why the namespace tests cannot run here, or nil. Root and the Debian tools are required.
    public static func unavailableReason() -> String? {
        if getuid() != 0 { return "network namespaces need root (CI and `make test` run as root)" }
        for tool in ["ip", "dbus-daemon", "avahi-daemon", "mount"] where (try? Subprocess.resolve(tool)) == nil {
            return "\(tool) is not installed: run `make test`, which installs avahi-daemon, dbus and iproute2"
        }
        return nil
    }

    /// Whether a test can run; when it cannot, says so loudly on stderr.
    public static func available(for test: String) -> Bool {
        guard let reason = unavailableReason() else { return true }
        FileHandle.standardError.write(Data("WARNING: SKIPPING \(test): \(reason)\n".utf8))
        return false
    }

    /// The D-Bus system bus address of namespace `namespace`'s private bus.
    public func busAddress(_ namespace: String) -> String {
        "unix:path=\(directory.path)/\(namespace)/bus"
    }

    /// Builds the network, runs `body`, and tears everything down whatever happens.
    ///
    /// - Parameters:
    ///   - busIn: Namespaces that get a private D-Bus system bus (default: those with avahi).
    ///   - avahiIn: Namespaces that get a private D-Bus and avahi-daemon (by name: "a", "b").
    ///   - withRouter: Join A and B through a router namespace that is their default route (default: a plain
    ///     veth pair and no default route at all).
    public static func with(
        busIn: Set<String>? = nil,
        avahiIn: Set<String>,
        withRouter: Bool = false,
        _ body: (MDNSNetwork) async throws -> Void
    ) async throws {
        let tag = String(UInt32.random(in: 0..<UInt32.max), radix: 16)
        let network = MDNSNetwork(
            tag: tag, directory: try Subprocess.temporaryDirectory("mdns"), router: withRouter)
        var daemons: [BackgroundProcess] = []
        do {
            try await network.createNamespaces()
            for name in ["a", "b"] where (busIn ?? avahiIn).union(avahiIn).contains(name) {
                daemons.append(try await network.startBus(name == "a" ? network.a : network.b))
            }
            for name in ["a", "b"] where avahiIn.contains(name) {
                daemons.append(
                    try await network.startAvahi(
                        name == "a" ? network.a : network.b,
                        interface: name == "a" ? network.a : network.b))
            }
            try await body(network)
        } catch {
            for daemon in daemons.reversed() { await daemon.stop() }
            await network.destroy()
            throw error
        }
        for daemon in daemons.reversed() { await daemon.stop() }
        await network.destroy()
    }

    public struct SetupError: Error, CustomStringConvertible {
        public var description: String
        public init(description: String) { self.description = description }
    }

    private func ip(_ arguments: String...) async throws {
        let result = try await Subprocess.run("ip", arguments)
        guard result.status == 0 else {
            throw SetupError(description: "ip \(arguments.joined(separator: " ")) failed: \(result.stderrText)")
        }
    }

    private func createNamespaces() async throws {
        for namespace in namespaces { try await ip("netns", "add", namespace) }
        // The hosts' veth ends are named after their namespaces.
        if let r {
            // The router: a bridge ("lan0") with a port for each host ("port-a", "port-b"), the router's LAN
            // address on the bridge, the internet server's on its loopback. Multicast snooping off: a plain switch.
            try await ip("-n", r, "link", "add", "lan0", "type", "bridge", "mcast_snooping", "0")
            for (host, port) in [(a, "port-a"), (b, "port-b")] {
                try await ip("link", "add", host, "netns", host, "type", "veth", "peer", "name", port, "netns", r)
                try await ip("-n", r, "link", "set", port, "master", "lan0")
                try await ip("-n", r, "link", "set", port, "up")
            }
            try await ip("-n", r, "addr", "add", "\(Self.routerAddress)/24", "dev", "lan0")
            try await ip("-n", r, "addr", "add", "\(Self.internetAddress)/32", "dev", "lo")
            try await ip("-n", r, "link", "set", "lo", "up")
            try await ip("-n", r, "link", "set", "lan0", "up")
        } else {
            try await ip("link", "add", a, "netns", a, "type", "veth", "peer", "name", b, "netns", b)
        }
        try await ip("-n", a, "addr", "add", "\(Self.addressA)/24", "dev", a)
        try await ip("-n", b, "addr", "add", "\(Self.addressB)/24", "dev", b)
        for namespace in [a, b] {
            try await ip("-n", namespace, "link", "set", "lo", "up")
            try await ip("-n", namespace, "link", "set", namespace, "up")
            if r != nil { try await ip("-n", namespace, "route", "add", "default", "via", Self.routerAddress) }
        }
    }

    private func destroy() async {
        for namespace in namespaces { await NetworkNamespace.delete(namespace) }
        try? FileManager.default.removeItem(at: directory)
    }

    /// A shell command that runs `daemon` as a child of the shell and forwards SIGTERM/SIGINT to it.
    ///
    /// Foundation's `Process` on Linux learns that a child exited when a socket the child inherited is closed, and
    /// then waits for it with a *blocking* `waitpid` on its one monitoring thread. Daemons that close every
    /// inherited descriptor at start-up (avahi-daemon, dbus-daemon) would block that thread until they exit, and no
    /// other child's exit would be noticed meanwhile. The shell keeps the descriptor instead.
    static func supervised(_ daemon: String) -> String {
        "\(daemon) & child=$!; trap 'kill -TERM $child 2>/dev/null; wait $child; exit 0' TERM INT; wait $child"
    }

    private func startBus(_ namespace: String) async throws -> BackgroundProcess {
        let folder = directory.appendingPathComponent(namespace)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let bus = try BackgroundProcess(
            "ip",
            [
                "netns", "exec", namespace, "sh", "-c",
                Self.supervised("dbus-daemon --system --nofork --nopidfile --address=\(busAddress(namespace))"),
            ])
        let socket = folder.appendingPathComponent("bus").path
        // Start-up budgets are generous (a loaded machine is slow to start daemons); a daemon that exits fails at once.
        let deadline = ContinuousClock.now + .seconds(120)
        while !FileManager.default.fileExists(atPath: socket) {
            guard ContinuousClock.now < deadline, bus.status == nil else {
                await bus.stop()
                throw SetupError(description: "dbus-daemon did not start in \(namespace): \(bus.errorOutput)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        return bus
    }

    private func startAvahi(_ namespace: String, interface: String) async throws -> BackgroundProcess {
        let folder = directory.appendingPathComponent(namespace)
        let config = folder.appendingPathComponent("avahi-daemon.conf")
        try """
        [server]
        host-name=\(namespace)
        domain-name=local
        use-ipv4=yes
        use-ipv6=no
        allow-interfaces=\(interface)
        enable-dbus=yes
        ratelimit-interval-usec=1000000
        ratelimit-burst=1000
        [wide-area]
        enable-wide-area=no
        [publish]
        publish-hinfo=no
        publish-workstation=no
        [reflector]
        enable-reflector=no

        """.write(to: config, atomically: true, encoding: .utf8)
        // avahi-daemon keeps its pid file and socket in /run/avahi-daemon: give it a private /run inside the mount
        // namespace of `ip netns exec`, so it neither sees nor touches the host's.
        let avahi = try BackgroundProcess(
            "ip",
            [
                "netns", "exec", namespace, "sh", "-c",
                "mount -t tmpfs mdns-test /run && mkdir /run/avahi-daemon && "
                    + Self.supervised(
                        "avahi-daemon --no-drop-root --no-chroot --no-rlimits --debug -f '\(config.path)'"),
            ],
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": busAddress(namespace)]
        )
        let deadline = ContinuousClock.now + .seconds(120)
        while !avahi.errorOutput.contains("Server startup complete") {
            guard ContinuousClock.now < deadline, avahi.status == nil else {
                await avahi.stop()
                throw SetupError(description: "avahi-daemon did not start in \(namespace): \(avahi.errorOutput)")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return avahi
    }

    /// Takes the link between the two hosts down (both veth ends lose carrier) or brings it back up.
    public func setLink(up: Bool) async throws {
        for namespace in [a, b] {
            try await ip("-n", namespace, "link", "set", namespace, up ? "up" : "down")
        }
    }

    /// Starts `executable` in `namespace`, talking to that namespace's private bus (and so its avahi-daemon).
    /// `environment` is added (e.g. a private session bus for desktop notifications).
    public func start(
        _ namespace: String,
        _ executable: String,
        _ arguments: [String],
        environment: [String: String] = [:],
        acceptsInput: Bool = false
    ) throws -> BackgroundProcess {
        try BackgroundProcess(
            "ip", ["netns", "exec", namespace, try Subprocess.resolve(executable)] + arguments,
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": busAddress(namespace), "AVAHI_COMPAT_NOWARN": "1"]
                .merging(environment) { $1 },
            acceptsInput: acceptsInput
        )
    }

    /// Runs `executable` in `namespace` to completion (see ``start(_:_:_:environment:acceptsInput:)``).
    public func run(
        _ namespace: String,
        _ executable: String,
        _ arguments: [String]
    ) async throws -> Subprocess.Result {
        try await Subprocess.run(
            "ip", ["netns", "exec", namespace, try Subprocess.resolve(executable)] + arguments,
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": busAddress(namespace), "AVAHI_COMPAT_NOWARN": "1"]
        )
    }

    /// Starts `mdns-probe` in `namespace`, talking to that namespace's bus.
    public func probe(_ namespace: String, _ arguments: [String]) throws -> BackgroundProcess {
        try start(namespace, try Subprocess.builtProduct("mdns-probe"), arguments)
    }

    /// Runs `mdns-probe` in `namespace` where no mDNS daemon runs, and checks that it fails as it should: exit status 1
    /// and one `daemonNotRunning` error line that says how to start Avahi, without Avahi's compat warning.
    ///
    /// - Returns: The error's message, for what a test checks beyond that.
    public func expectDaemonNotRunning(_ namespace: String, _ arguments: [String]) async throws -> String {
        let probe = try probe(namespace, arguments)
        defer { Task { await probe.stop() } }
        let what = "mdns-probe \(arguments.joined(separator: " ")):"
        #expect(await probe.waitForExit(timeout: .seconds(30)) == 1, "\(what) \(probe.output) \(probe.errorOutput)")
        let error = try #require(probe.output.first.flatMap(jsonObject), "\(what) \(probe.errorOutput)")
        #expect(error["event"] as? String == "error", "\(what) \(error)")
        #expect(error["code"] as? String == "daemonNotRunning", "\(what) \(error)")
        let message = try #require(error["message"] as? String, "\(what) \(error)")
        #expect(message.contains("systemctl start avahi-daemon"), "\(what) \(message)")
        #expect(!probe.errorOutput.contains("Bonjour compatibility layer"), "\(what) AVAHI_COMPAT_NOWARN was not set")
        return message
    }

    /// Starts the python-zeroconf peer in `namespace` (it speaks mDNS itself: no avahi needed there).
    public func zeroconfPeer(_ namespace: String, _ arguments: [String]) throws -> BackgroundProcess {
        guard let python = InteropPeers.python else {
            throw SetupError(description: "the Python interop venv is missing: run `make test`")
        }
        let script = Fixtures.repositoryRoot.appendingPathComponent("Tests/Interop/mdns/zeroconf_peer.py").path
        return try BackgroundProcess("ip", ["netns", "exec", namespace, python, "-u", script] + arguments)
    }
}

/// Decodes one JSON-lines output line.
public func jsonObject(_ line: String) -> [String: Any]? {
    (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
}
