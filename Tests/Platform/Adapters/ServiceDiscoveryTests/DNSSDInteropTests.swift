import Foundation
import TestSupport
import Testing

/// The generic DNS-SD adapter against a real Avahi daemon and an independent mDNS stack (python-zeroconf), each in
/// its own network namespace, with a service type no product uses. Each test has namespaces of its own, so the
/// tests run side by side; the heavy-test gate bounds them. (CribCall's monitors over this adapter:
/// `Tests/CribCall/Adapters/CribCallDiscoveryTests`.)
@Suite(.heavy("network namespaces, each with dbus + avahi, python-zeroconf"))
struct DNSSDInteropTests {
    static let type = "_homeapps-test._udp"

    static func canRun(_ test: String, python: Bool = false) -> Bool {
        MDNSNetwork.available(for: test) && (!python || InteropPeers.pythonAvailable(for: test))
    }

    /// The instances listed by an `instances` line of `mdns-probe browse`.
    static func instances(_ line: String?) -> [[String: Any]] {
        line.flatMap(jsonObject)?["instances"] as? [[String: Any]] ?? []
    }

    @Test("A TXT record updated in place reaches a browser on another host; a withdrawn service disappears")
    func updateAndWithdraw() async throws {
        guard Self.canRun("updateAndWithdraw") else { return }
        try await MDNSNetwork.with(avahiIn: ["a", "b"]) { network in
            let browser = try network.probe(network.b, ["browse", "--type", Self.type, "--seconds", "40"])
            defer { Task { await browser.stop() } }
            let registrar = try network.probe(
                network.a,
                [
                    "register", "--name", "Front Door", "--type", Self.type, "--port", "4242", "--txt", "path=/ws",
                    "--txt", "version=1", "--set-txt", "path=/ws", "--set-txt", "version=2", "--after", "4",
                ])
            defer { Task { await registrar.stop() } }
            let registered = await registrar.line { $0.contains("\"registered\"") }
            #expect(registered != nil, "probe: \(registrar.output) \(registrar.errorOutput)")
            let seen = await browser.line { line in
                Self.instances(line).contains { ($0["addresses"] as? [String])?.contains(MDNSNetwork.addressA) == true }
            }
            let instance = try #require(Self.instances(seen).first, "probe: \(browser.output) \(browser.errorOutput)")
            #expect(instance["type"] as? String == Self.type)
            #expect(instance["name"] as? String == "Front Door")
            #expect(instance["port"] as? Int == 4242)
            // A browser may list the TXT entries in any order.
            #expect((instance["txt"] as? [String])?.sorted() == ["path=/ws", "version=1"])

            #expect(
                await registrar.line(timeout: .seconds(20)) { $0.contains("\"updated\"") } != nil,
                "probe: \(registrar.output) \(registrar.errorOutput)")
            let updated = await browser.line(timeout: .seconds(20)) { line in
                Self.instances(line).contains { $0["txt"] as? [String] == ["path=/ws", "version=2"] }
            }
            #expect(updated != nil, "probe: \(browser.output)")
            #expect(Self.instances(updated).map { $0["name"] as? String } == ["Front Door"])

            // The registrar ends: its daemon withdraws the service (goodbye packets), and the browser's view empties.
            await registrar.stop()
            let withdrawn = await browser.line(timeout: .seconds(20)) { line in
                jsonObject(line)?["event"] as? String == "instances" && Self.instances(line).isEmpty
            }
            #expect(withdrawn != nil, "probe: \(browser.output)")
        }
    }

    @Test("A service registered by python-zeroconf is browsed with its port, TXT entries and address, then goes away")
    func zeroconfServiceBrowsed() async throws {
        guard Self.canRun("zeroconfServiceBrowsed", python: true) else { return }
        try await MDNSNetwork.with(avahiIn: ["a"]) { network in
            let browser = try network.probe(network.a, ["browse", "--type", Self.type, "--seconds", "40"])
            defer { Task { await browser.stop() } }
            let peer = try network.zeroconfPeer(
                network.b,
                [
                    "register", "--name", "Guest Room", "--type", "\(Self.type).local.", "--port", "4433",
                    "--address", MDNSNetwork.addressB, "--txt", "Path=/guest", "--txt", "flag", "--seconds", "10",
                ])
            defer { Task { await peer.stop() } }
            try await peer.ready("zeroconf_peer.py register") { $0.contains("\"registered\"") }

            let seen = await browser.line { line in
                Self.instances(line).contains { ($0["addresses"] as? [String])?.isEmpty == false }
            }
            let instance = try #require(Self.instances(seen).first, "probe: \(browser.output) \(browser.errorOutput)")
            #expect(instance["name"] as? String == "Guest Room")
            #expect(instance["port"] as? Int == 4433)
            // A browser may list the TXT entries in any order (seen on a loaded fresh clone, as in the test above).
            #expect((instance["txt"] as? [String])?.sorted() == ["Path=/guest", "flag"])
            #expect(instance["addresses"] as? [String] == [MDNSNetwork.addressB])

            // The peer unregisters by itself (goodbye packets) after --seconds.
            #expect(
                await peer.line(timeout: .seconds(30)) { $0.contains("\"unregistered\"") } != nil,
                "zeroconf: \(peer.output) \(peer.errorOutput)")
            let gone = await browser.line(timeout: .seconds(20)) { line in
                jsonObject(line)?["event"] as? String == "instances" && Self.instances(line).isEmpty
            }
            #expect(gone != nil, "probe: \(browser.output)")
        }
    }

    @Test(
        "Without an Avahi daemon, register and browse fail with daemonNotRunning and say how to start it",
        arguments: [false, true])
    func noDaemon(withBus: Bool) async throws {
        guard Self.canRun("noDaemon") else { return }
        try await MDNSNetwork.with(busIn: withBus ? ["a"] : [], avahiIn: []) { network in
            for command in [
                ["register", "--name", "N", "--type", Self.type, "--port", "4242"],
                ["browse", "--type", Self.type, "--seconds", "10"],
            ] {
                let message = try await network.expectDaemonNotRunning(network.a, command)
                #expect(!message.contains("--"), "a product's options have no place in the generic message")
            }
        }
    }
}
