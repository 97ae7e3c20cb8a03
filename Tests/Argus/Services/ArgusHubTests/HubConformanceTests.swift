import ArgusHub
import ArgusStore
import ArgusTestSupport
import Foundation
import Synchronization
import TestSupport
import Testing

/// What schemathesis cannot check against docs/api/mobile-api.yaml: each refusal's `code` is the one the spec names
/// for that case, headers go out as the spec writes them, and the token rules hold over time.
@Suite("The hub's answers are the spec's, case by case")
struct HubConformanceTests {
    /// A clock the test moves.
    final class Clock: Sendable {
        private let offset = Mutex<TimeInterval>(0)
        func advance(_ seconds: TimeInterval) { offset.withLock { $0 += seconds } }
        var now: Date { Date().addingTimeInterval(offset.withLock { $0 }) }
    }

    /// The error codes the spec lists ("`code` is for programs: …").
    static let specCodes: Set<String> = {
        let yaml =
            (try? String(
                contentsOf: Fixtures.repositoryRoot.appendingPathComponent("docs/api/mobile-api.yaml"), encoding: .utf8))
            ?? ""
        guard let start = yaml.range(of: "`code` is for programs: ")?.upperBound,
            let end = yaml[start...].range(of: ".\n")?.lowerBound
        else { return [] }
        return Set(
            yaml[start..<end].components(separatedBy: ",").map {
                $0.trimmingCharacters(in: .whitespacesAndNewlines).trimmingCharacters(
                    in: CharacterSet(charactersIn: "`"))
            })
    }()

    static func code(_ answer: LoopbackHTTP.Answer) -> String? {
        (try? HubFixture.json(answer))?["code"] as? String
    }

    static func verifyBody(_ code: String, device: String) -> String {
        #"{"pairing_code":"\#(code)","device_name":"Phone","device_id":"\#(device)"}"#
    }

    @Test("pairing codes: a used or void code is pairing_code_invalid, only a late one pairing_code_expired")
    func pairingCodes() async throws {
        let clock = Clock()
        let hub = try await HubFixture { $0.now = { clock.now } }
        defer { Task { await hub.stop() } }
        #expect(Self.specCodes.contains("pairing_code_invalid") && Self.specCodes.count >= 12, "\(Self.specCodes)")
        let used = try await hub.pairingCode()
        #expect(
            try await hub.call("POST", "/api/v1/mobile/auth/verify", body: Self.verifyBody(used, device: "a")).status
                == 200)
        let again = try await hub.call("POST", "/api/v1/mobile/auth/verify", body: Self.verifyBody(used, device: "b"))
        #expect(again.status == 400 && (Self.code(again)) == "pairing_code_invalid", "used: \(again.text)")

        let late = try await hub.pairingCode()
        clock.advance(301)
        let expired = try await hub.call("POST", "/api/v1/mobile/auth/verify", body: Self.verifyBody(late, device: "c"))
        #expect(expired.status == 400 && (Self.code(expired)) == "pairing_code_expired", "late: \(expired.text)")
    }

    @Test("tokens: an expired access token is token_expired; refusals of a refresh are invalid_refresh_token")
    func tokenCodes() async throws {
        let clock = Clock()
        let hub = try await HubFixture { $0.now = { clock.now } }
        defer { Task { await hub.stop() } }
        let (access, refresh) = try await hub.pair("phone-1")
        clock.advance(3_601)
        let expired = try await hub.call("GET", "/api/v1/mobile/events", token: access)
        #expect(expired.status == 401 && (Self.code(expired)) == "token_expired", "\(expired.text)")
        #expect(expired.headers["www-authenticate"]?.hasPrefix("Bearer") == true)
        for (token, device) in [(String(repeating: "A", count: 43), "phone-1"), (refresh, "phone-2")] {
            let refused = try await hub.call(
                "POST", "/api/v1/mobile/auth/refresh",
                body: #"{"refresh_token":"\#(token)","device_id":"\#(device)"}"#)
            #expect(refused.status == 401 && (Self.code(refused)) == "invalid_refresh_token", "\(refused.text)")
        }
    }

    @Test("a used refresh token presented again unpairs the device: its access tokens stop at once")
    func reuseEndsEveryToken() async throws {
        let clock = Clock()
        let hub = try await HubFixture { $0.now = { clock.now } }
        defer { Task { await hub.stop() } }
        let (_, first) = try await hub.pair("phone-1")
        let rotated = try await hub.call(
            "POST", "/api/v1/mobile/auth/refresh", body: #"{"refresh_token":"\#(first)","device_id":"phone-1"}"#)
        #expect(rotated.status == 200)
        let access = try #require(try HubFixture.json(rotated)["access_token"] as? String)
        #expect(try await hub.call("GET", "/api/v1/mobile/cameras", token: access).status == 200)
        clock.advance(60)  // past the grace for a lost answer: this is theft
        let replay = try await hub.call(
            "POST", "/api/v1/mobile/auth/refresh", body: #"{"refresh_token":"\#(first)","device_id":"phone-1"}"#)
        #expect(replay.status == 401 && (Self.code(replay)) == "invalid_refresh_token")
        let after = try await hub.call("GET", "/api/v1/mobile/cameras", token: access)
        #expect(after.status == 401 && (Self.code(after)) == "unauthorized", "the access token still works")
        let devices = try ArgusDatabase(directory: hub.directory).devices()
        #expect(devices.first { $0.deviceId == "phone-1" }?.isActive == false, "the device stays paired")
    }

    @Test("every refusal, of every kind the hub makes, carries one of the spec's codes and its status")
    func everyRefusalIsTheSpecs() async throws {
        let hub = try await HubFixture()
        defer { Task { await hub.stop() } }
        let (access, _) = try await hub.pair("phone-1")
        let unknown = UUID().uuidString.lowercased()
        let calls: [(String, String, String?, [String: String], String?, Int, String)] = [
            ("GET", "/api/v1/mobile/events", nil, [:], nil, 401, "unauthorized"),
            ("GET", "/api/v1/mobile/events", "not-a-token", [:], nil, 401, "unauthorized"),
            ("GET", "/api/v1/mobile/events/\(unknown)", access, [:], nil, 404, "not_found"),
            ("GET", "/api/v1/mobile/events/not-an-id/thumbnail", access, [:], nil, 404, "not_found"),
            ("GET", "/api/v1/mobile/cameras/\(unknown)/snapshot", access, [:], nil, 404, "not_found"),
            ("GET", "/api/v1/mobile/events?limit=1000", access, [:], nil, 422, "invalid_request"),
            ("GET", "/api/v1/mobile/nothing-here", access, [:], nil, 404, "not_found"),
            ("DELETE", "/api/v1/mobile/events", access, [:], nil, 405, "method_not_allowed"),
            ("POST", "/api/v1/mobile/auth/pair", nil, [:], nil, 403, "forbidden"),
            ("POST", "/api/v1/mobile/auth/verify", nil, [:], #"{"pairing_code":"12"}"#, 422, "invalid_request"),
            (
                "POST", "/api/v1/mobile/auth/verify", nil, [:], Self.verifyBody("000000", device: "x"), 400,
                "pairing_code_invalid"
            ),
            (
                "POST", "/api/v1/mobile/auth/verify", nil, [:], String(repeating: " ", count: 5_000), 413,
                "payload_too_large"
            ),
            (
                "POST", "/api/v1/mobile/push/register", access, [:],
                #"{"apns_token":"\#(String(repeating: "a", count: 64))","device_id":"phone-2"}"#, 403, "forbidden"
            ),
        ]
        for (method, path, token, headers, body, status, code) in calls {
            let answer = try await hub.call(method, path, token: token, headers: headers, body: body)
            #expect(answer.status == status, "\(method) \(path): \(answer.status) \(answer.text)")
            #expect(Self.code(answer) == code, "\(method) \(path): \(answer.text)")
            #expect(Self.code(answer).map(Self.specCodes.contains) == true, "not a code of the spec: \(answer.text)")
            #expect(answer.headers["content-type"]?.hasPrefix("application/json") == true)
            if status == 401 { #expect(answer.headers["www-authenticate"]?.hasPrefix("Bearer") == true) }
        }
    }

    @Test("a flood of bogus refreshes naming a device does not lock the device out")
    func refreshFlood() async throws {
        let hub = try await HubFixture()
        defer { Task { await hub.stop() } }
        let (_, refresh) = try await hub.pair("phone-1")
        var statuses: [Int: Int] = [:]
        for _ in 0..<40 {
            let bogus = try await hub.call(
                "POST", "/api/v1/mobile/auth/refresh",
                body: #"{"refresh_token":"\#(String(repeating: "B", count: 43))","device_id":"phone-1"}"#)
            statuses[bogus.status, default: 0] += 1
            #expect((Self.code(bogus)).map(Self.specCodes.contains) == true)
        }
        #expect(statuses[401] == 30 && statuses[429] == 10, "the flood itself is limited: \(statuses)")
        // The real device, from the same address even: its valid token is honoured.
        let real = try await hub.call(
            "POST", "/api/v1/mobile/auth/refresh", body: #"{"refresh_token":"\#(refresh)","device_id":"phone-1"}"#)
        #expect(real.status == 200, "the device was locked out: \(real.status) \(real.text)")
    }

    @Test("headers as the spec writes them; ids in either case; a body without a JSON Content-Type is 422")
    func requestsAndHeaders() async throws {
        let hub = try await HubFixture()
        defer { Task { await hub.stop() } }
        let (access, _) = try await hub.pair("phone-1")
        let database = try ArgusDatabase(directory: hub.directory)
        let camera = try database.configuredCamera(name: "Porch", source: "test", sourceType: "test")
        let event = try database.addEvent(
            cameraId: camera.id, description: "Motion", smartDetectionType: "motion", confidence: nil,
            thumbnail: Data([0xFF, 0xD8, 0xFF, 0xD9]), at: Date())
        let thumbnail = try await hub.call("GET", "/api/v1/mobile/events/\(event.id)/thumbnail", token: access)
        #expect(thumbnail.status == 200 && thumbnail.headers["cache-control"] == "private, max-age=86400")
        let upper = try await hub.call("GET", "/api/v1/mobile/events/\(event.id.uppercased())", token: access)
        #expect(upper.status == 200 && upper.text.contains(event.id), "\(upper.status) \(upper.text)")
        let upperPicture = try await hub.call(
            "GET", "/api/v1/mobile/events/\(event.id.uppercased())/thumbnail", token: access)
        #expect(upperPicture.status == 200)

        for contentType in [nil, "text/plain", "application/x-www-form-urlencoded"] {
            var arguments = [
                "-sS", "-X", "POST", "\(hub.url)/api/v1/mobile/auth/verify", "--data-binary",
                Self.verifyBody("123456", device: "x"),
            ]
            arguments += ["-H", "Content-Type:" + (contentType.map { " \($0)" } ?? "")]
            arguments += ["-w", "\n%{http_code}"]
            let curl = try await Subprocess.run("curl", arguments)
            let lines = curl.stdoutText.split(separator: "\n")
            #expect(lines.last == "422", "Content-Type \(contentType ?? "none"): \(curl.stdoutText)")
            #expect(lines.first?.contains(#""code":"invalid_request""#) == true, "\(curl.stdoutText)")
        }
    }
}
