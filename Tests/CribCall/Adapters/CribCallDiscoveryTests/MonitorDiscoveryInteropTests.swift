import Foundation
import TestSupport
import Testing

/// Monitors announced and found through the real DNS-SD adapter, against a real Avahi daemon and an independent mDNS
/// stack (python-zeroconf), each in its own network namespace. Each test has namespaces of its own (the same
/// addresses in separate network stacks), so the tests run side by side; they mostly wait for mDNS timers, and the
/// heavy-test gate bounds them.
@Suite(.heavy("network namespaces, each with dbus + avahi, python-zeroconf"))
struct MonitorDiscoveryInteropTests {
    static let fingerprint = String(repeating: "5a", count: 32)
    static let udp = "_baby-monitor._udp.local."
    static let tcp = "_baby-monitor._tcp.local."

    static func canRun(_ test: String, python: Bool = false) -> Bool {
        MDNSNetwork.available(for: test) && (!python || InteropPeers.pythonAvailable(for: test))
    }

    @Test("A Swift advertisement is seen by python-zeroconf under both types with exactly the §10 TXT")
    func advertisementSeenByZeroconf() async throws {
        guard Self.canRun("advertisementSeenByZeroconf", python: true) else { return }
        try await MDNSNetwork.with(avahiIn: ["a"]) { network in
            let advertiser = try network.probe(
                network.a,
                [
                    "advertise-monitor", "--id", "monitor-1", "--name", "Nursery", "--fingerprint", Self.fingerprint,
                    "--port", "48080",
                ])
            defer { Task { await advertiser.stop() } }
            let advertised = await advertiser.line { $0.contains("\"advertised\"") }
            #expect(advertised != nil, "probe: \(advertiser.output) \(advertiser.errorOutput)")

            let browser = try network.zeroconfPeer(
                network.b,
                [
                    "browse", "--type", Self.udp, "--type", Self.tcp,
                    "--seconds", "20",
                ])
            defer { Task { await browser.stop() } }
            try await browser.ready("zeroconf_peer.py browse") { jsonObject($0)?["event"] as? String == "ready" }
            for serviceType in [Self.udp, Self.tcp] {
                let line = await browser.line { line in
                    guard let event = jsonObject(line) else { return false }
                    return event["event"] as? String == "add" && event["type"] as? String == serviceType
                }
                let event = try #require(line.flatMap(jsonObject), "zeroconf: \(browser.output) \(browser.errorOutput)")
                #expect(event["name"] as? String == "Nursery.\(serviceType)")
                #expect(event["port"] as? Int == 48080)
                #expect((event["addresses"] as? [String])?.contains(MDNSNetwork.addressA) == true)
                let txt = try #require(event["txt"] as? [String: String])
                #expect(
                    txt == [
                        "monitorId": "monitor-1", "monitorName": "Nursery", "monitorCertFingerprint": Self.fingerprint,
                        "version": "1", "servicePort": "48080",
                    ])
            }
        }
    }

    @Test("A monitor registered by python-zeroconf is found with its fields and address, then lost")
    func zeroconfMonitorFoundAndLost() async throws {
        guard Self.canRun("zeroconfMonitorFoundAndLost", python: true) else { return }
        try await MDNSNetwork.with(avahiIn: ["a"]) { network in
            let browser = try network.probe(network.a, ["browse-monitors", "--seconds", "40"])
            defer { Task { await browser.stop() } }
            let peer = try network.zeroconfPeer(
                network.b,
                [
                    "register", "--name", "Guest Room", "--port", "4433", "--address", MDNSNetwork.addressB,
                    "--type", Self.udp, "--type", Self.tcp, "--txt", "monitorId=zc-monitor",
                    "--txt", "monitorName=Guest Room", "--txt", "monitorCertFingerprint=\(Self.fingerprint)",
                    "--txt", "version=1", "--txt", "servicePort=4433", "--seconds", "10",
                ])
            defer { Task { await peer.stop() } }
            try await peer.ready("zeroconf_peer.py register") { $0.contains("\"registered\"") }

            let found = await browser.line { jsonObject($0)?["event"] as? String == "found" }
            let event = try #require(found.flatMap(jsonObject), "probe: \(browser.output) \(browser.errorOutput)")
            #expect(event["monitorId"] as? String == "zc-monitor")
            #expect(event["monitorName"] as? String == "Guest Room")
            #expect(event["certFingerprint"] as? String == Self.fingerprint)
            #expect(event["port"] as? Int == 4433)
            #expect(event["hosts"] as? [String] == [MDNSNetwork.addressB])

            // The peer unregisters by itself (goodbye packets) after --seconds.
            #expect(
                await peer.line(timeout: .seconds(30)) { $0.contains("\"unregistered\"") } != nil,
                "zeroconf: \(peer.output) \(peer.errorOutput)")
            // Meanwhile both service types were merged into the one monitor (checked on the recorded events).
            let merged = browser.output.contains { line in
                Set(jsonObject(line)?["serviceTypes"] as? [String] ?? []) == [
                    "_baby-monitor._tcp", "_baby-monitor._udp",
                ]
            }
            #expect(merged, "probe: \(browser.output)")
            let lost = await browser.line(timeout: .seconds(20)) { jsonObject($0)?["event"] as? String == "lost" }
            #expect(lost.flatMap(jsonObject)?["monitorId"] as? String == "zc-monitor", "probe: \(browser.output)")
        }
    }

    @Test("Renaming an advertised monitor reaches a browser on another host as one updated event")
    func renameIsUpdated() async throws {
        guard Self.canRun("renameIsUpdated") else { return }
        try await MDNSNetwork.with(avahiIn: ["a", "b"]) { network in
            let browser = try network.probe(network.b, ["browse-monitors", "--seconds", "40"])
            defer { Task { await browser.stop() } }
            let advertiser = try network.probe(
                network.a,
                [
                    "advertise-monitor", "--id", "monitor-2", "--name", "Nursery", "--fingerprint", Self.fingerprint,
                    "--port", "48080", "--rename", "Bedroom", "--after", "4",
                ])
            defer { Task { await advertiser.stop() } }
            // The monitor is reachable at its IPv4 address (a link-local IPv6 address may be reported too, or first).
            let found = await browser.line { line in
                let event = jsonObject(line)
                return ["found", "updated"].contains(event?["event"] as? String)
                    && (event?["hosts"] as? [String])?.contains(MDNSNetwork.addressA) == true
            }
            let event = try #require(found.flatMap(jsonObject), "probe: \(browser.output) \(browser.errorOutput)")
            #expect(event["monitorName"] as? String == "Nursery")

            #expect(
                await advertiser.line(timeout: .seconds(20)) { $0.contains("\"renamed\"") } != nil,
                "probe: \(advertiser.output) \(advertiser.errorOutput)")
            let updated = await browser.line(timeout: .seconds(20)) { line in
                let event = jsonObject(line)
                return event?["event"] as? String == "updated" && event?["monitorName"] as? String == "Bedroom"
            }
            #expect(updated != nil, "probe: \(browser.output)")
            // The grace period turns the withdrawn old instance name into that update, never a lost.
            try await Task.sleep(for: .seconds(4))
            #expect(!browser.output.contains { jsonObject($0)?["event"] as? String == "lost" }, "\(browser.output)")
        }
    }

    @Test(
        "Without an Avahi daemon, advertise and browse fail with daemonNotRunning and say what to do",
        arguments: [false, true])
    func noDaemon(withBus: Bool) async throws {
        guard Self.canRun("noDaemon") else { return }
        try await MDNSNetwork.with(busIn: withBus ? ["a"] : [], avahiIn: []) { network in
            for command in [
                [
                    "advertise-monitor", "--id", "m", "--name", "N", "--fingerprint", Self.fingerprint, "--port",
                    "48080",
                ],
                ["browse-monitors", "--seconds", "10"],
            ] {
                let message = try await network.expectDaemonNotRunning(network.a, command)
                #expect(message.contains("--address HOST:PORT"))
            }
        }
    }
}
