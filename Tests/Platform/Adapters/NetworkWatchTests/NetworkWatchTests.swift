import Foundation
import TestSupport
import Testing

@testable import NetworkWatch

#if canImport(Glibc)
    import Glibc
#endif

@Suite("NetworkWatch: the online judgement")
struct RoutingTableTests {
    typealias Route = RoutingTable.DefaultRoute
    typealias Link = RoutingTable.Link

    @Test(
        "online needs a default route whose link is up and running, not loopback, not marked link-down",
        arguments: [
            ([Route(interfaces: [2], linkDown: false)], [Link(index: 2, up: true, loopback: false)], true),
            ([], [Link(index: 2, up: true, loopback: false)], false),
            ([Route(interfaces: [2], linkDown: false)], [Link(index: 2, up: false, loopback: false)], false),
            ([Route(interfaces: [2], linkDown: true)], [Link(index: 2, up: true, loopback: false)], false),
            ([Route(interfaces: [1], linkDown: false)], [Link(index: 1, up: true, loopback: true)], false),
            ([Route(interfaces: [3], linkDown: false)], [Link(index: 2, up: true, loopback: false)], false),
            (
                [Route(interfaces: [2, 3], linkDown: false)],
                [Link(index: 2, up: false, loopback: false), Link(index: 3, up: true, loopback: false)], true
            ),
        ])
    func judgement(routes: [Route], links: [Link], online: Bool) {
        #expect(RoutingTable(defaultRoutes: routes, links: links).isOnline == online)
    }

    @Test("this machine's tables can be read and a watch opened and stopped")
    func hostTables() async throws {
        let table = try RoutingTable.read()
        #expect(table.links.contains { $0.loopback }, "every namespace has a loopback link: \(table.links)")
        let watch = try NetworkWatch()
        watch.stop()
        try await withTimeout(.seconds(20), "the stream to end after stop()") {
            for await _ in watch.changes {}
        }
    }
}

/// In a network namespace of its own, joined by a veth pair to a peer namespace that is its gateway, the probe
/// (`network-watch-probe`, the adapter in a process of its own inside the namespace) reports what the kernel says.
@Suite("NetworkWatch: kernel events in a network namespace", .serialized, .heavy(cores: 0.25, "network namespaces"))
struct NetworkWatchNamespaceTests {
    /// The bound for an event after the `ip` command that causes it returned (the probe is already subscribed).
    static let eventDeadline = Duration.seconds(2)

    @Test("link down and up, default route removed and added: events within 2 s, isOnline follows the default route")
    func linkAndRoute() async throws {
        guard NetworkNamespace.available(for: "the NetworkWatch namespace test") else { return }
        try await NetworkNamespace.withPair(prefix: "nw", subnet: "10.79.0") { pair in
            try await watchSteps(host: pair.host, gateway: pair.gateway)
        }
    }

    func watchSteps(host: String, gateway: String) async throws {
        let process = try BackgroundProcess(
            "ip", ["netns", "exec", host, try Subprocess.builtProduct("network-watch-probe")])
        let ready = await process.line(timeout: .seconds(60)) { $0.contains(#""event":"ready""#) }
        let readyLine = try #require(ready, "the probe did not start: \(process.errorOutput)")
        #expect(readyLine.contains(#""online":true"#), "a default route via an up link is online: \(readyLine)")

        // Each step: what to do, and the line that must follow within the deadline.
        let steps: [(what: String, command: [String], expected: String)] = [
            (
                "the gateway's end goes down (carrier lost)", ["-n", gateway, "link", "set", gateway, "down"],
                #""online":false"#
            ),
            ("the gateway's end comes back", ["-n", gateway, "link", "set", gateway, "up"], #""online":true"#),
            ("the default route is removed", ["-n", host, "route", "del", "default"], #""online":false"#),
            (
                "the default route is added again", ["-n", host, "route", "add", "default", "via", "10.79.0.2"],
                #""online":true"#
            ),
        ]
        for step in steps {
            let seen = process.output.count
            let result = try await Subprocess.run("ip", step.command)
            #expect(result.status == 0, "ip \(step.command): \(result.stderrText)")
            let deadline = ContinuousClock.now + Self.eventDeadline
            var line: String?
            repeat {
                line = process.output.dropFirst(seen).first {
                    $0.contains(#""event":"change""#) && $0.contains(step.expected)
                }
                if line == nil { try await Task.sleep(for: .milliseconds(10)) }
            } while line == nil && ContinuousClock.now < deadline
            // Checked once more: a busy test process may wake this wait late, after the line arrived.
            line =
                line
                ?? process.output.dropFirst(seen).first {
                    $0.contains(#""event":"change""#) && $0.contains(step.expected)
                }
            #expect(
                line != nil,
                """
                after \(step.what): no change event with \(step.expected) within \(Self.eventDeadline); \
                the probe printed \(process.output.dropFirst(seen))
                """)
        }
        _ = await process.stop()
    }
}
