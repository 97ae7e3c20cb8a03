import Foundation
import TestSupport
import Testing

/// A listener follows its monitor to a new address (issue 32, item 3; seed 000 §FR3 `lastKnownIp`): the monitor's
/// host gets a new lease and the monitor comes back on another port. The listener, on its defaults, finds it again
/// by the id and fingerprint its mDNS announcement carries and stores the new address; its pinned fingerprint is
/// still what the connection checks. A stranger announcing the monitor's id (python-zeroconf, with another
/// fingerprint, pointing at a real `cribcall monitor` of another identity) neither draws the listener away nor
/// locks it out.
@Suite(.heavy("two network namespaces with dbus + avahi, two monitors and a listener"))
struct FollowMovedMonitorTests {
    static let newAddress = "10.78.0.3"

    @Test(
        "the monitor moves to a new address and port: the listener finds it by mDNS and follows; a stranger with its id is ignored"
    )
    func followsMovedMonitor() async throws {
        guard CribCallEndToEndTests.canRun("followsMovedMonitor") else { return }
        try await MDNSNetwork.with(avahiIn: ["a", "b"]) { network in
            let lan = try TwoHouseholdDevices(network)
            defer { lan.removeData() }
            let (monitor, ready) = try await lan.startMonitor(["--name", "Nursery", "--qr"])
            let qrText = try #require(
                await monitor.line { lan.event($0) == "qr" }.flatMap(jsonObject)?["text"] as? String,
                "monitor: \(monitor.output)")
            let pair = try await network.run(
                network.b, lan.cribcall,
                ["pair", "--qr", qrText, "--address", "\(MDNSNetwork.addressA):\(ready.port)", "--name", "Mum"]
                    + lan.listenerData)
            #expect(pair.status == 0, "pair: \(pair.stdoutText) \(pair.stderrText)")
            let listener = try network.start(
                network.b, lan.cribcall, ["listen", "--json", "--no-notify"] + lan.listenerData)
            defer { Task { await listener.stop() } }
            #expect(
                await listener.line(timeout: .seconds(20)) { lan.event($0) == "connected" } != nil, "\(listener.output)"
            )

            // The nursery's machine restarts with a new lease, and the monitor takes another port.
            await monitor.stop()
            try await NetworkNamespace.ip(
                "-n", network.a, "addr", "del", "\(MDNSNetwork.addressA)/24", "dev", network.a)
            try await NetworkNamespace.ip("-n", network.a, "addr", "add", "\(Self.newAddress)/24", "dev", network.a)
            // A stranger on the LAN: a monitor of its own identity, announced (by python-zeroconf) with the paired
            // monitor's id under a name that sorts first.
            let strangerData = try Subprocess.temporaryDirectory("e2e-stranger")
            defer { try? FileManager.default.removeItem(at: strangerData) }
            let stranger = try network.start(
                network.a, lan.cribcall,
                [
                    "monitor", "--json", "--audio-source", "test:silence", "--no-discovery", "--port", "5000",
                    "--name", "A Nursery", "--data-dir", strangerData.path,
                ])
            defer { Task { await stranger.stop() } }
            let strangerReady = try #require(
                try? await stranger.ready("the stranger's monitor") { lan.event($0) == "ready" },
                "\(stranger.errorOutput)")
            let strangerFingerprint = try #require(jsonObject(strangerReady)?["certFingerprint"] as? String)
            let announcement = try network.zeroconfPeer(
                network.a,
                [
                    "register", "--name", "A Nursery", "--port", "5000", "--address", Self.newAddress, "--type",
                    "_baby-monitor._udp.local.", "--txt", "monitorId=\(ready.monitorId)", "--txt",
                    "monitorName=A Nursery",
                    "--txt", "monitorCertFingerprint=\(strangerFingerprint)", "--txt", "version=1", "--txt",
                    "servicePort=5000",
                ])
            defer { Task { await announcement.stop() } }
            try await announcement.ready("zeroconf_peer.py register") { lan.event($0) == "registered" }
            let (moved, movedReady) = try await lan.startMonitor(["--name", "Nursery", "--port", "\(ready.port + 1)"])
            defer { Task { await moved.stop() } }
            #expect(movedReady.monitorId == ready.monitorId && movedReady.fingerprint == ready.fingerprint)

            #expect(
                await listener.line(timeout: .seconds(60)) { lan.event($0) == "link_restored" } != nil,
                "the listener did not follow: \(listener.output.suffix(8)) \(listener.errorOutput.suffix(800))")
            #expect(
                await moved.line(timeout: .seconds(10)) { lan.event($0) == "listener_connected" } != nil,
                "\(moved.output.suffix(5))")
            // The cry test sound every 10 s: alerts flow again, from the monitor where it is now.
            #expect(
                await listener.line(timeout: .seconds(25)) { line in
                    lan.event(line) == "noise" && jsonObject(line)?["replayed"] as? Bool == false
                } != nil, "\(listener.output.suffix(5))")
            let listed = try await network.run(
                network.b, lan.cribcall, ["monitors", "list", "--json"] + lan.listenerData)
            let stored = try #require(jsonObject(listed.stdoutText.split(separator: "\n").first.map(String.init) ?? ""))
            // Its new address: the IPv4 one, or its IPv6 link-local one on the same link (mDNS announces both).
            let host = stored["host"] as? String ?? ""
            #expect(
                (host == Self.newAddress || host.hasPrefix("fe80:")) && stored["port"] as? Int == ready.port + 1,
                "\(stored)")
            // The stranger got no connection from it, and nothing locked the listener out.
            #expect(!stranger.output.contains { lan.event($0) == "listener_connected" }, "\(stranger.output)")
            #expect(!listener.output.contains { lan.event($0) == "unauthorized" }, "\(listener.output)")
        }
    }
}
