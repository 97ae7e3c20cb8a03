import Foundation
import TestSupport
import Testing

/// `_bemyears._tcp` (seed §15.2, §17) as an independent mDNS stack sees it: `bemyears-server` in network namespace
/// A with a private Avahi, python-zeroconf browsing from namespace B (`Tests/Interop/mdns/zeroconf_peer.py`).
@Suite("Bonjour advertisement", .serialized, .heavy("network namespaces with avahi, python-zeroconf"))
struct BonjourTests {
    static let serviceType = "_bemyears._tcp.local."

    @Test func advertisedOnTheLANAndWithdrawnOnExit() async throws {
        guard MDNSNetwork.available(for: "BonjourTests"), InteropPeers.pythonAvailable(for: "BonjourTests") else {
            return
        }
        try await MDNSNetwork.with(avahiIn: ["a"]) { network in
            let server = try network.start(
                network.a,
                try Subprocess.builtProduct("bemyears-server"),
                ["--host", MDNSNetwork.addressA, "--port", "0", "--json"]
            )
            let ready = try await server.ready("bemyears-server") { $0.contains(#""event":"ready""#) }
            let port = try #require(jsonObject(ready)?["port"] as? Int, "server: \(server.errorOutput)")

            let browser = try network.zeroconfPeer(
                network.b, ["browse", "--type", Self.serviceType, "--seconds", "20"])
            try await browser.ready("zeroconf_peer.py browse") { jsonObject($0)?["event"] as? String == "ready" }
            let added = await browser.line(timeout: .seconds(20)) { line in
                jsonObject(line)?["event"] as? String == "add"
            }
            let event = try #require(added.flatMap(jsonObject), "zeroconf: \(browser.output) \(browser.errorOutput)")
            #expect(event["port"] as? Int == port)
            #expect((event["addresses"] as? [String])?.contains(MDNSNetwork.addressA) == true)
            #expect(event["txt"] as? [String: String] == ["path": "/ws", "version": "1"])
            #expect((event["name"] as? String)?.hasPrefix("BeMyEars on ") == true)
            // Avahi may announce before it calls back the registration that the server logs.
            #expect(
                await server.errorOutput(contains: "event=bonjour_advertised", timeout: .seconds(10)),
                "server: \(server.errorOutput)"
            )

            #expect(await server.stop(grace: .seconds(10)) == 0)
            let removed = await browser.line(timeout: .seconds(10)) { jsonObject($0)?["event"] as? String == "remove" }
            #expect(removed != nil, "the advertisement was not withdrawn: \(browser.output)")
            await browser.stop()
        }
    }
}
