import Foundation
import TestSupport
import Testing

/// A CribCall monitor as a camera of the hub, end to end through the three programs a household runs:
/// `cribcall monitor` (a test camera and test cries), `argus-hub` (paired with it as a CribCall listener) and the
/// `argus` client (over pinned TLS), all on loopback.
@Suite(
    "CribCall monitor → argus-hub → argus", .serialized,
    .heavy(cores: 1, "a CribCall monitor with a camera, the hub, WebRTC pictures"))
struct MonitorCameraTests {
    /// One JSON object per line.
    static func objects(_ text: String) -> [[String: Any]] {
        text.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    @Test(
        "the monitor's noise and safety alerts become events with pictures, it is a camera with snapshots, and forgetting it ends that"
    )
    func monitorThroughHubToClient() async throws {
        let root = try Subprocess.temporaryDirectory("argus-monitor")
        defer { try? FileManager.default.removeItem(at: root) }
        let monitorData = ["--data-dir", root.appendingPathComponent("monitor").path]
        let hubData = ["--data-dir", root.appendingPathComponent("hub").path]
        let config = ["--config-dir", root.appendingPathComponent("app").path]
        let cribcall = try Subprocess.builtProduct("cribcall")
        let argusHub = try Subprocess.builtProduct("argus-hub")
        let argus = try Subprocess.builtProduct("argus")

        // Bad input first: each refusal says what to do.
        let neither = try await Subprocess.run(argusHub, ["monitors", "pair"] + hubData)
        #expect(neither.status == 64 && neither.stderrText.contains("--qr TEXT or --pin"), "\(neither.stderrText)")
        let notAQR = try await Subprocess.run(argusHub, ["monitors", "pair", "--qr", #"{"argus":1}"#] + hubData)
        #expect(notAQR.status != 0 && !notAQR.stderrText.isEmpty, "\(notAQR.stdoutText)")
        let none = try await Subprocess.run(argusHub, ["monitors", "list"] + hubData)
        #expect(none.stdoutText.contains("Pair one with `argus-hub monitors pair --qr TEXT`"), "\(none.stdoutText)")

        let monitor = try BackgroundProcess(
            cribcall,
            [
                "monitor", "--name", "Nursery", "--safety", "--video-source", "test", "--audio-source", "test:cry",
                "--port", "0", "--json", "--no-discovery", "--qr", "--ice-address", "127.0.0.1",
            ] + monitorData)
        defer { Task { await monitor.stop() } }
        let monitorReady = try await monitor.ready("cribcall monitor") { $0.contains(#""event":"ready""#) }
        let monitorPort = try #require(Self.objects(monitorReady).first?["port"] as? Int)
        let qrLine = try #require(await monitor.line { $0.contains(#""event":"qr""#) }, "\(monitor.errorOutput)")
        let qrText = try #require(Self.objects(qrLine).first?["text"] as? String)

        // The hub runs before the pairing: it picks the new monitor up by itself.
        let hub = try BackgroundProcess(
            argusHub,
            ["--host", "127.0.0.1", "--port", "0", "--json", "--no-bonjour", "--ice-address", "127.0.0.1"] + hubData)
        defer { Task { await hub.stop() } }
        let hubReady = try await hub.ready("argus-hub") { $0.contains(#""event":"ready""#) }
        let hubPort = try #require(Self.objects(hubReady).first?["port"] as? Int)
        let paired = try await Subprocess.run(
            argusHub, ["monitors", "pair", "--qr", qrText, "--address", "127.0.0.1:\(monitorPort)"] + hubData)
        #expect(paired.status == 0 && paired.stdoutText.contains(#"Paired with "Nursery""#), "\(paired.stderrText)")
        let listed = try await Subprocess.run(argusHub, ["monitors", "list", "--json"] + hubData)
        #expect(Self.objects(listed.stdoutText).map { $0["name"] as? String } == ["Nursery"], "\(listed.stdoutText)")

        let code = try #require(
            Self.objects(try await Subprocess.run(argusHub, ["pair", "--json"] + hubData).stdoutText).first)
        let pair = try await Subprocess.run(
            argus,
            [
                "pair", "--hub", "https://127.0.0.1:\(hubPort)", "--fingerprint",
                code["cert_fingerprint"] as? String ?? "", "--code", code["pairing_code"] as? String ?? "",
            ] + config)
        #expect(pair.status == 0, "\(pair.stderrText)")

        let camera: [String: Any] = try await awaitValue(
            "the monitor as an online camera", timeout: .seconds(30), poll: .milliseconds(500)
        ) {
            let cameras = Self.objects(try await Subprocess.run(argus, ["cameras", "--json"] + config).stdoutText)
            return cameras.first { $0["name"] as? String == "Nursery" && $0["is_online"] as? Bool == true }
        }
        #expect(camera["source_type"] as? String == "cribcall")
        let cameraId = try #require(camera["id"] as? String)

        // test:cry makes a noise event at least every 20 s; a live one gets a picture from the monitor's camera.
        let noise: String = try await awaitValue(
            "a noise event with its picture", timeout: .seconds(60), poll: .milliseconds(500)
        ) {
            let events = Self.objects(try await Subprocess.run(argus, ["events", "--json"] + config).stdoutText)
            for event in events where event["smart_detection_type"] as? String == "noise" {
                let id = event["id"] as? String ?? ""
                let file = root.appendingPathComponent("noise.jpg").path
                if try await Subprocess.run(argus, ["thumbnail", id, "--output", file] + config).status == 0 {
                    return file
                }
            }
            return nil
        }
        let noisePicture = try Data(contentsOf: URL(fileURLWithPath: noise))
        #expect(noisePicture.starts(with: [0xFF, 0xD8]) && noisePicture.count <= 50_000, "\(noisePicture.count) B")

        // A safety alert (through the monitor's real path) carries its evidence: the event's thumbnail at once.
        #expect(
            await monitor.line(timeout: .seconds(30)) {
                $0.contains(#""event":"safety_status""#) && $0.contains(#""monitoring":"active""#)
            } != nil, "the test pattern is judged: \(monitor.output.suffix(5))")
        let raised = try await Subprocess.run(cribcall, ["alert", "trigger", "face_covered"] + monitorData)
        #expect(raised.status == 0, "\(raised.stderrText)")
        let alert: [String: Any] = try await awaitValue(
            "the safety alert as an event", timeout: .seconds(20), poll: .milliseconds(500)
        ) {
            Self.objects(try await Subprocess.run(argus, ["events", "--json"] + config).stdoutText)
                .first { $0["smart_detection_type"] as? String == "face_covered" }
        }
        #expect(alert["description"] as? String == "Baby's face may be covered")
        #expect(alert["camera_id"] as? String == cameraId && alert["camera_name"] as? String == "Nursery")
        let evidence = root.appendingPathComponent("alert.jpg").path
        let saved = try await Subprocess.run(
            argus, ["thumbnail", alert["id"] as? String ?? "", "--output", evidence] + config)
        #expect(saved.status == 0, "the evidence is the thumbnail at once: \(saved.stderrText)")

        // A snapshot is a picture of the monitor's camera now, within 100 KB.
        let snapshotFile = root.appendingPathComponent("snapshot.jpg").path
        let snapshot = try await Subprocess.run(argus, ["snapshot", cameraId, "--output", snapshotFile] + config)
        #expect(snapshot.status == 0, "\(snapshot.stderrText)")
        let picture = try Data(contentsOf: URL(fileURLWithPath: snapshotFile))
        #expect(picture.starts(with: [0xFF, 0xD8]) && picture.count <= 102_400, "\(picture.count) B")

        // Forgotten: the monitor is told, and it is no longer a camera of the running hub.
        let forgot = try await Subprocess.run(argusHub, ["monitors", "forget", "Nursery"] + hubData)
        #expect(forgot.status == 0 && forgot.stdoutText.contains("monitor confirmed"), "\(forgot.stdoutText)")
        try await eventually("the camera to go", timeout: .seconds(20)) {
            let cameras = Self.objects(try await Subprocess.run(argus, ["cameras", "--json"] + config).stdoutText)
            return !cameras.contains { $0["id"] as? String == cameraId }
        }
        let unknown = try await Subprocess.run(argusHub, ["monitors", "forget", "Nursery"] + hubData)
        #expect(unknown.status == 1 && unknown.stderrText.contains("argus-hub monitors list"), "\(unknown.stderrText)")
    }
}
