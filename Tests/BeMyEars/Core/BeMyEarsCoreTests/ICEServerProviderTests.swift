import BeMyEarsCore
import BeMyEarsTestSupport
import CanonicalJSON
import Foundation
import Testing

@Suite("REGISTERED's iceServers from an ICEServerProvider")
struct ICEServerProviderTests {
    @Test("each REGISTERED asks the provider with its own session and the hub's clock (expiring TURN credentials)")
    func perRegistration() async throws {
        let clock = ManualClock()
        let outbound = RecordingOutbound()
        let provider = ICEServerProvider { session, now in
            [
                ICEServer(
                    urls: ["turn:t:3478"], username: "\(Int(now.timeIntervalSince1970)):\(session)", credential: "c")
            ]
        }
        let hub = SignalingHub(store: InMemorySignalingStore(), outbound: outbound, clock: clock, iceServers: provider)
        var usernames: [String] = []
        for name in ["ivy", "cal"] {
            let client = TestClient(id: .random(), hub: hub, outbound: outbound)
            await hub.connect(client.id)
            await client.send(.register, payload: ["username": .string(name), "role": "interpreter"])
            let expected = provider.iceServers(for: client.id, at: clock.now)
            #expect(expected[0].username == "\(Int(clock.now.timeIntervalSince1970)):\(client.id)")
            #expect(
                try client.received().first
                    == .registered(
                        username: Username(name)!,
                        role: .interpreter,
                        heartbeatIntervalSeconds: 15,
                        presenceTTLSeconds: 20,
                        iceServers: expected
                    )
            )
            usernames.append(expected[0].username ?? "")
        }
        #expect(usernames[0] != usernames[1])
    }

    @Test("without a provider, the configuration's fixed list is used")
    func fixedByDefault() {
        let servers = [ICEServer(urls: ["stun:s:3478"])]
        #expect(ICEServerProvider.fixed(servers).iceServers(for: .random(), at: Date()) == servers)
    }
}
