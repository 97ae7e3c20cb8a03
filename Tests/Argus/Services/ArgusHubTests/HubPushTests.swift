import ArgusHub
import ArgusPush
import ArgusStore
import ArgusTestSupport
import Foundation
import TestSupport
import Testing

/// Events pushed through the APNs client to a local APNs stand-in (Python's ssl and h2, `apns_standin.py`) that
/// checks the provider token's ES256 signature, its team and key, and the APNs headers, as Apple's servers do.
@Suite("Push through APNs: every event to every registered device", .heavy(cores: 0.5, "GStreamer test pattern"))
struct HubPushTests {
    @Test(
        "a motion event reaches each registered phone; a token APNs calls unregistered is forgotten; one token reused")
    func pushes() async throws {
        guard let python = InteropPeers.python else {
            Issue.record("the Python venv is missing: run `make test` (it installs h2 into .venv)")
            return
        }
        let phone = String(repeating: "a1", count: 32)
        let gone = String(repeating: "b2", count: 32)
        let apns = try await APNsStandIn.start(python: python, unregistered: [gone])
        let push = apns.configuration
        let hub = try await HubFixture { configuration in
            configuration.push = push
            configuration.cameraSpecs = [try CameraSpec(parsing: "Garden=test")]
            configuration.motionCooldown = 1
        }
        for (device, token) in [("phone-ana", phone), ("phone-old", gone)] {
            let (access, _) = try await hub.pair(device)
            let registered = try await hub.call(
                "POST", "/api/v1/mobile/push/register", token: access,
                body: #"{"apns_token":"\#(token)","device_id":"\#(device)"}"#)
            #expect(registered.status == 200, "\(registered.text)")
        }

        // two pushes to the phone (one connection, one provider token), and the 410 for the old one
        let delivered: [[String: Any]] = try await awaitValue("two pushes delivered", timeout: .seconds(30)) {
            let lines = apns.pushes
            let ok = lines.filter { $0["token"] as? String == phone && $0["status"] as? Int == 200 }
            let refused = lines.contains { $0["token"] as? String == gone && $0["status"] as? Int == 410 }
            return ok.count >= 2 && refused ? ok : nil
        }
        let first = delivered[0]
        let payload = try #require(first["payload"] as? [String: Any])
        let alert = try #require((payload["aps"] as? [String: Any])?["alert"] as? [String: String])
        #expect(alert["title"] == "Garden" && alert["body"]?.hasPrefix("Motion ") == true, "\(payload)")
        let eventId = try #require(payload["event_id"] as? String)
        let (access, _) = try await hub.pair("phone-check")
        #expect(try await hub.call("GET", "/api/v1/mobile/events/\(eventId)", token: access).status == 200)
        #expect(first["push_type"] as? String == "alert" && first["priority"] as? Int == 10)
        #expect(Set(delivered.compactMap { $0["connection"] as? Int }).count == 1, "one HTTP/2 connection")
        // pushes sent side by side (to both phones) wait for one provider token: Apple throttles a key whose
        // tokens change too often
        #expect(Set(apns.pushes.compactMap { $0["token_serial"] as? Int }) == [1], "one provider token: \(apns.pushes)")

        try await eventually("the unregistered token forgotten") {
            let targets = try ArgusDatabase(directory: hub.directory).pushTargets()
            return targets.map(\.deviceId) == ["phone-ana"]
        }
        let metrics = try await hub.call("GET", "/metrics")
        #expect(!metrics.text.contains("mobile_push_sent 0"), "\(metrics.text)")
        await hub.stop()
        await apns.stop()
    }
}
