import ArgusAuth
import ArgusHub
import ArgusStore
import ArgusTestSupport
import Foundation
import TestSupport
import Testing

/// The hub over real HTTP on loopback: pairing, tokens, limits and refusals, as an app meets them.
@Suite("The hub's mobile API over HTTP")
struct HubAPITests {
    @Test("the owner makes a code, the app exchanges it, calls with its token, refreshes; a replayed token ends it")
    func pairingAndTokens() async throws {
        let hub = try await HubFixture()
        let health = try await hub.call("GET", "/health")
        #expect(health.status == 200 && health.text.contains(#""status" : "ok""#))

        // nobody but the owner makes codes
        let stranger = try await hub.call("POST", "/api/v1/mobile/auth/pair")
        #expect(stranger.status == 403 && stranger.text.contains("argus-hub pair"))
        let wrongKey = try await hub.call(
            "POST", "/api/v1/mobile/auth/pair", headers: ["X-Argus-Admin": String(repeating: "0", count: 64)])
        #expect(wrongKey.status == 403)

        let (access, refresh) = try await hub.pair("phone-1", name: "Ana's iPhone")
        let events = try await hub.call("GET", "/api/v1/mobile/events", token: access)
        #expect(events.status == 200, "\(events.text)")
        #expect(try HubFixture.json(events)["total"] as? Int == 0)
        let anonymous = try await hub.call("GET", "/api/v1/mobile/events")
        #expect(anonymous.status == 401 && anonymous.headers["www-authenticate"] == "Bearer")

        let rotated = try await hub.call(
            "POST", "/api/v1/mobile/auth/refresh", body: #"{"refresh_token":"\#(refresh)","device_id":"phone-1"}"#)
        #expect(rotated.status == 200, "\(rotated.text)")
        let next = try #require(try HubFixture.json(rotated)["refresh_token"] as? String)
        #expect(next != refresh)
        let newAccess = try #require(try HubFixture.json(rotated)["access_token"] as? String)
        #expect(try await hub.call("GET", "/api/v1/mobile/cameras", token: newAccess).status == 200)
        // the seed's metrics, for this machine
        let metrics = try await hub.call("GET", "/metrics")
        #expect(metrics.status == 200 && metrics.headers["content-type"]?.hasPrefix("text/plain") == true)
        for line in [
            "mobile_pairing_requests 1", "mobile_pairing_success 1", "mobile_pairing_failed 0",
            "mobile_token_refresh 1",
            #"mobile_api_requests_count{endpoint="/api/v1/mobile/events"} 2"#,
            #"mobile_api_requests_count{endpoint="/api/v1/mobile/cameras"} 1"#,
        ] {
            #expect(metrics.text.contains(line), "\(line) in:\n\(metrics.text)")
        }

        // another device cannot use the token; a replay a minute later is reuse, and the family goes
        let otherDevice = try await hub.call(
            "POST", "/api/v1/mobile/auth/refresh", body: #"{"refresh_token":"\#(next)","device_id":"phone-2"}"#)
        #expect(otherDevice.status == 401)
        let third = try await hub.call(
            "POST", "/api/v1/mobile/auth/refresh", body: #"{"refresh_token":"\#(next)","device_id":"phone-1"}"#)
        let latest = try #require(try HubFixture.json(third)["refresh_token"] as? String)
        let database = try ArgusDatabase(directory: hub.directory)
        // the same as a replay after the grace: the hub's own rule, applied with a later clock
        #expect(try database.refresh(next, deviceId: "phone-1", now: Date().addingTimeInterval(60)) == .reuseDetected)
        let afterReuse = try await hub.call(
            "POST", "/api/v1/mobile/auth/refresh", body: #"{"refresh_token":"\#(latest)","device_id":"phone-1"}"#)
        #expect(afterReuse.status == 401 && afterReuse.text.contains("Invalid or expired refresh token"))
        await hub.stop()
    }

    @Test(
        "the hub's database failing under a paired app: 503 hub_unavailable, never 'no longer paired' nor 'does not match the API'; fine again once it reads"
    )
    func storeFailing() async throws {
        let hub = try await HubFixture()
        let (access, _) = try await hub.pair("phone-1", name: "Ana's iPhone")
        let file = hub.directory.appendingPathComponent(ArgusDatabase.fileName).path
        func sqlite(_ sql: String) async throws {
            let result = try await Subprocess.run("sqlite3", [file, sql])
            #expect(result.status == 0, "\(result.stderrText)")
        }
        // Whether the device is paired cannot be read: not an answer that makes the app forget its pairing.
        try await sqlite("ALTER TABLE device RENAME TO deviceAway;")
        let unreadable = try await hub.call("GET", "/api/v1/mobile/events", token: access)
        #expect(unreadable.status == 503, "\(unreadable.text)")
        #expect(unreadable.text.contains("hub_unavailable") && !unreadable.text.contains("no longer paired"))
        try await sqlite("ALTER TABLE deviceAway RENAME TO device;")
        // The events cannot be read: the request was fine, the hub was not.
        try await sqlite("ALTER TABLE event RENAME TO eventAway;")
        let failed = try await hub.call("GET", "/api/v1/mobile/events", token: access)
        #expect(failed.status == 503, "\(failed.text)")
        #expect(failed.text.contains("Nothing you sent was wrong"), "\(failed.text)")
        try await sqlite("ALTER TABLE eventAway RENAME TO event;")
        #expect(try await hub.call("GET", "/api/v1/mobile/events", token: access).status == 200)
        await hub.stop()
    }

    @Test("ten failed verifications from one client: 429 with Retry-After; five wrong guesses void the code")
    func bruteForce() async throws {
        let hub = try await HubFixture()
        let code = try await hub.pairingCode()
        var statuses: [Int] = []
        for guess in 0..<11 {
            let wrong = String(format: "%06d", (Int(code)! + 1 + guess) % 1_000_000)
            let answer = try await hub.call(
                "POST", "/api/v1/mobile/auth/verify",
                body: #"{"pairing_code":"\#(wrong)","device_name":"Mallory","device_id":"m-1"}"#)
            statuses.append(answer.status)
            if answer.status == 429 {
                let wait = try #require(answer.headers["retry-after"].flatMap(Int.init))
                #expect((1...900).contains(wait))
            } else {
                #expect(answer.text.contains("Invalid pairing code"))
            }
        }
        #expect(statuses == Array(repeating: 400, count: 10) + [429])
        // the right code, from another client's point of view: void after the fifth wrong guess
        let database = try ArgusDatabase(directory: hub.directory)
        #expect(
            try database.verifyPairingCode(
                code, device: DeviceRequest(deviceId: "m-1", deviceName: "M", deviceType: "iphone"), now: Date())
                == .invalid(voided: 0))
        await hub.stop()
    }

    @Test("of two apps verifying one code at the same moment, exactly one is paired")
    func simultaneousVerify() async throws {
        let hub = try await HubFixture()
        for round in 0..<5 {
            let code = try await hub.pairingCode()
            async let first = hub.call(
                "POST", "/api/v1/mobile/auth/verify",
                body: #"{"pairing_code":"\#(code)","device_name":"A","device_id":"a-\#(round)"}"#)
            async let second = hub.call(
                "POST", "/api/v1/mobile/auth/verify",
                body: #"{"pairing_code":"\#(code)","device_name":"B","device_id":"b-\#(round)"}"#)
            let statuses = try await [first.status, second.status].sorted()
            #expect(statuses == [200, 400], "round \(round)")
        }
        await hub.stop()
    }

    @Test("a revoked device is refused at once; a token cannot act for another device")
    func revocation() async throws {
        let hub = try await HubFixture()
        let (access, _) = try await hub.pair("phone-1")
        let push = String(repeating: "a1", count: 32)
        let mine = try await hub.call(
            "POST", "/api/v1/mobile/push/register", token: access,
            body: #"{"apns_token":"\#(push)","device_id":"phone-1"}"#)
        #expect(mine.status == 200 && mine.text.contains("true"))
        let theirs = try await hub.call(
            "POST", "/api/v1/mobile/push/register", token: access,
            body: #"{"apns_token":"\#(push)","device_id":"phone-2"}"#)
        #expect(theirs.status == 403)
        let admin = try HubAdmin(dataDirectory: hub.directory)
        #expect(try admin.revoke("phone").deviceId == "phone-1")
        let after = try await hub.call("GET", "/api/v1/mobile/events", token: access)
        #expect(after.status == 401 && after.text.contains("no longer paired"))
        await hub.stop()
    }

    @Test("bad input gets the spec's Error with what is wrong: 422, 413, 404, 405")
    func badInput() async throws {
        let hub = try await HubFixture()
        let (access, _) = try await hub.pair("phone-1")
        let verify = "/api/v1/mobile/auth/verify"
        for (body, words) in [
            ("nonsense", "not valid JSON"), (#"{"pairing_code":"123456"}"#, "required field"),
            (#"{"pairing_code":123456,"device_name":"A","device_id":"x"}"#, "wrong type"),
            (#"{"pairing_code":"12a456","device_name":"A","device_id":"x"}"#, "6 digits"),
            (#"{"pairing_code":"123456","device_name":"A","device_id":"x y"}"#, "device_id"),
            (#"{"pairing_code":"123456","device_name":"\u0007","device_id":"x"}"#, "device_name"),
        ] {
            let answer = try await hub.call("POST", verify, body: body)
            let json = try HubFixture.json(answer)
            #expect(answer.status == 422, "\(body): \(answer.status) \(answer.text)")
            #expect((json["detail"] as? String)?.contains(words) == true, "\(body): \(answer.text)")
            #expect(json["code"] as? String == "invalid_request")
        }
        let huge = try await hub.call(
            "POST", verify, body: #"{"device_name":"\#(String(repeating: "x", count: 5000))"}"#)
        #expect(huge.status == 413 && huge.text.contains("4 KB"))
        let limit = try await hub.call("GET", "/api/v1/mobile/events?limit=101", token: access)
        #expect(limit.status == 422 && limit.text.contains("1 to 100"))
        let unknown = try await hub.call("GET", "/api/v1/mobile/events/not-an-id", token: access)
        #expect(unknown.status == 404 && unknown.text.contains("No event has this id"))
        let nowhere = try await hub.call("GET", "/api/v2/everything")
        #expect(nowhere.status == 404 && nowhere.headers["content-type"] == "application/json")
        let method = try await hub.call("PUT", "/health")
        #expect(method.status == 405 && method.headers["allow"] == "GET", "\(method.status) \(method.headers)")
        await hub.stop()
    }
}
