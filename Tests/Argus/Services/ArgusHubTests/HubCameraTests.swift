import ArgusHub
import ArgusTestSupport
import Foundation
import TestSupport
import Testing
import VideoCapture

/// A hub watching the moving test pattern: the camera is listed and online, its motion becomes events with
/// thumbnails, and snapshots come within their limits.
@Suite("The hub's cameras: motion events with thumbnails, snapshots", .heavy(cores: 0.5, "GStreamer test pattern"))
struct HubCameraTests {
    @Test("--camera test yields motion events on its own, each with a thumbnail ≤ 50 KB; snapshots ≤ 100 KB")
    func testPattern() async throws {
        let hub = try await HubFixture { configuration in
            configuration.cameraSpecs = [try CameraSpec(parsing: "Garden=test")]
            configuration.motionCooldown = 1
        }
        let (token, _) = try await hub.pair("phone-1")
        let camera: [String: Any] = try await awaitValue("the camera listed and online", timeout: .seconds(30)) {
            let answer = try await hub.call("GET", "/api/v1/mobile/cameras", token: token)
            let cameras = try HubFixture.json(answer)["cameras"] as? [[String: Any]] ?? []
            return cameras.first { $0["name"] as? String == "Garden" && $0["is_online"] as? Bool == true }
        }
        #expect(camera["source_type"] as? String == "test")
        let cameraId = try #require(camera["id"] as? String)

        let events: [[String: Any]] = try await awaitValue("two motion events", timeout: .seconds(30)) {
            let answer = try await hub.call("GET", "/api/v1/mobile/events?limit=5", token: token)
            let events = try HubFixture.json(answer)["events"] as? [[String: Any]] ?? []
            return events.count >= 2 ? events : nil
        }
        let first = events[0]
        #expect(first["camera_id"] as? String == cameraId && first["camera_name"] as? String == "Garden")
        #expect(first["smart_detection_type"] as? String == "motion")
        #expect((first["description"] as? String)?.hasPrefix("Motion ") == true, "\(first)")
        let eventId = try #require(first["id"] as? String)
        let thumbnail = try await hub.call("GET", "/api/v1/mobile/events/\(eventId)/thumbnail", token: token)
        #expect(thumbnail.status == 200 && thumbnail.headers["content-type"] == "image/jpeg")
        #expect(thumbnail.body.count <= 50_000 && Array(thumbnail.body.prefix(2)) == [0xFF, 0xD8])
        #expect(thumbnail.headers["content-length"] == String(thumbnail.body.count))
        let detail = try HubFixture.json(try await hub.call("GET", "/api/v1/mobile/events/\(eventId)", token: token))
        #expect(detail["has_video"] as? Bool == false && (detail["confidence_score"] as? Double ?? -1) >= 0)
        let recent = try HubFixture.json(try await hub.call("GET", "/api/v1/mobile/events/recent", token: token))
        #expect((recent["events"] as? [[String: Any]])?.first?["id"] as? String != nil)

        let snapshot = try await hub.call("GET", "/api/v1/mobile/cameras/\(cameraId)/snapshot", token: token)
        #expect(snapshot.status == 200 && snapshot.body.count <= 100_000 && snapshot.body.count > 1000)
        let unknown = try await hub.call(
            "GET", "/api/v1/mobile/cameras/\(UUID().uuidString.lowercased())/snapshot", token: token)
        #expect(unknown.status == 404)
        await hub.stop()
    }

    @Test("a network camera: GStreamer's RTSP server streams H.264, the hub decodes it and its motion makes events")
    func rtsp() async throws {
        let script = Fixtures.repositoryRoot.appendingPathComponent("Tests/Interop/argus/rtsp_server.py").path
        let server = try BackgroundProcess("/usr/bin/python3", [script, "--port", "0"])
        guard let ready = await server.line(timeout: .seconds(20), where: { $0.contains(#""event": "ready""#) }) else {
            let why = server.errorOutput
            Issue.record(
                Comment(
                    rawValue: "rtsp_server.py did not start: apt-get install python3-gi gir1.2-gst-rtsp-server-1.0 "
                        + "(make test installs them): \(why)"))
            _ = await server.stop()
            return
        }
        let url = try #require(
            (try JSONSerialization.jsonObject(with: Data(ready.utf8)) as? [String: Any])?["url"] as? String)
        let hub = try await HubFixture { configuration in
            configuration.cameraSpecs = [try CameraSpec(parsing: "Porch=\(url)")]
            configuration.motionCooldown = 1
        }
        let (token, _) = try await hub.pair("phone-1")
        let camera: [String: Any] = try await awaitValue("the network camera online", timeout: .seconds(30)) {
            let answer = try await hub.call("GET", "/api/v1/mobile/cameras", token: token)
            let cameras = try HubFixture.json(answer)["cameras"] as? [[String: Any]] ?? []
            return cameras.first { $0["is_online"] as? Bool == true }
        }
        #expect(camera["source_type"] as? String == "rtsp" && camera["name"] as? String == "Porch")
        let events: [[String: Any]] = try await awaitValue("motion from the network camera", timeout: .seconds(30)) {
            let answer = try await hub.call("GET", "/api/v1/mobile/events", token: token)
            let events = try HubFixture.json(answer)["events"] as? [[String: Any]] ?? []
            return events.isEmpty ? nil : events
        }
        #expect(events[0]["camera_name"] as? String == "Porch")
        let snapshot = try await hub.call(
            "GET", "/api/v1/mobile/cameras/\(camera["id"] as? String ?? "")/snapshot", token: token)
        #expect(snapshot.status == 200 && snapshot.body.count <= 100_000)
        await hub.stop()
        _ = await server.stop()
    }

    @Test("a network camera's password is never kept or shown")
    func redacted() throws {
        let spec = try CameraSpec(parsing: "Door=rtsp://admin:hunter2@10.0.0.5:554/stream1")
        #expect(spec.source.description == "rtsp://admin:***@10.0.0.5:554/stream1")
        #expect(!"\(spec.source)".contains("hunter2"))
        #expect(throws: HubError.self) { try CameraSpec(parsing: "rtsp://") }
    }

    @Test(
        "camera specs: names, kinds, and what is refused",
        arguments: [
            ("test", "Test pattern"), ("Porch=v4l2:/dev/video3", "Porch"), ("v4l2", "Camera /dev/video0"),
            ("file:/tmp/garden.mkv", "garden"), ("rtsp://10.0.0.5/live", "Camera at 10.0.0.5"),
        ])
    func specs(text: String, name: String) throws {
        #expect(try CameraSpec(parsing: text).name == name)
    }

    @Test("an unknown camera kind says what is accepted")
    func badSpec() {
        #expect(throws: HubError.self) { try CameraSpec(parsing: "webcam") }
        #expect(throws: HubError.self) { try CameraSpec(parsing: "=test") }
    }
}
