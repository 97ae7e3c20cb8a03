import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Helpers for tests that build network namespaces with `ip` (root).
public enum NetworkNamespace {
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
