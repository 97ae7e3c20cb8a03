import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Helpers for tests that build network namespaces with `ip` (root).
public enum NetworkNamespace {
    /// Two namespaces joined by a veth pair whose ends are named after them: `host` (`subnet.1`, its default route
    /// via `subnet.2`) and `gateway` (`subnet.2`), links up and carrier seen.
    public struct Pair: Sendable {
        public let host: String
        public let gateway: String
        public let hostAddress: String
        public let gatewayAddress: String
    }

    /// Why namespace tests cannot run here (not root, or a tool missing), or nil.
    public static func unavailableReason(tools: [String] = ["ip"]) -> String? {
        if getuid() != 0 { return "network namespaces need root (CI and `make test` run as root)" }
        for tool in tools where (try? Subprocess.resolve(tool)) == nil {
            return "\(tool) is not installed: run `make test`, which installs what tests need"
        }
        return nil
    }

    /// Whether `test` can run; when it cannot, says so loudly on stderr.
    public static func available(for test: String, tools: [String] = ["ip"]) -> Bool {
        guard let reason = unavailableReason(tools: tools) else { return true }
        FileHandle.standardError.write(Data("WARNING: SKIPPING \(test): \(reason)\n".utf8))
        return false
    }

    /// Runs `ip` with `arguments`.
    /// - Throws: ``MissingValue`` with `ip`'s complaint when it fails.
    public static func ip(_ arguments: String...) async throws {
        let result = try await Subprocess.run("ip", arguments)
        guard result.status == 0 else {
            throw MissingValue(description: "ip \(arguments.joined(separator: " ")) failed: \(result.stderrText)")
        }
    }

    /// Builds a ``Pair`` named `prefix`+random+`h`/`g` on `subnet` (e.g. "10.79.0"), runs `body`, and deletes both
    /// namespaces (and whatever runs in them) whatever happens.
    public static func withPair(
        prefix: String, subnet: String, _ body: (Pair) async throws -> Void
    ) async throws {
        let tag = String(UInt32.random(in: 0..<UInt32.max), radix: 16)
        let pair = Pair(
            host: "\(prefix)\(tag)h", gateway: "\(prefix)\(tag)g", hostAddress: "\(subnet).1",
            gatewayAddress: "\(subnet).2")
        do {
            try await ip("netns", "add", pair.host)
            try await ip("netns", "add", pair.gateway)
            try await ip(
                "link", "add", pair.host, "netns", pair.host, "type", "veth", "peer", "name", pair.gateway, "netns",
                pair.gateway)
            try await ip("-n", pair.host, "addr", "add", "\(pair.hostAddress)/24", "dev", pair.host)
            try await ip("-n", pair.gateway, "addr", "add", "\(pair.gatewayAddress)/24", "dev", pair.gateway)
            for name in [pair.host, pair.gateway] {
                try await ip("-n", name, "link", "set", "lo", "up")
                try await ip("-n", name, "link", "set", name, "up")
            }
            try await ip("-n", pair.host, "route", "add", "default", "via", pair.gatewayAddress)
            try await waitForCarrier(pair.host, in: pair.host, present: true)
            try await body(pair)
        } catch {
            for name in [pair.host, pair.gateway] { await delete(name) }
            throw error
        }
        for name in [pair.host, pair.gateway] { await delete(name) }
    }

    /// Deletes the network namespace `name`; whatever still runs in it (a daemon that outlived its stop, a program
    /// a failed test left behind) is killed first.
    public static func delete(_ name: String) async {
        let pids = (try? await Subprocess.run("ip", ["netns", "pids", name]))?.stdoutText ?? ""
        for pid in pids.split(whereSeparator: \.isWhitespace).compactMap({ Int32($0) }) { kill(pid, SIGKILL) }
        _ = try? await Subprocess.run("ip", ["netns", "del", name])
    }

    /// Waits until `link` in `namespace` has (or has lost) its carrier: the kernel reports carrier changes a moment
    /// after `ip link set` returns (linkwatch), so a test that starts a program "offline" or "online" waits first.
    public static func waitForCarrier(_ link: String, in namespace: String, present: Bool) async throws {
        try await eventually("\(link) in \(namespace) to \(present ? "get" : "lose") its carrier") {
            let shown = try await Subprocess.run("ip", ["-n", namespace, "-o", "link", "show", link]).stdoutText
            return shown.contains("LOWER_UP") == present
        }
    }
}
