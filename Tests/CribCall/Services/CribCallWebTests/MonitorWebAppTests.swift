import CanonicalJSON
import CribCallMonitor
import CribCallStore
import CribCallTestSupport
import CribCallWeb
import Foundation
import LocalWebApp
import StreamMedia
import TestSupport
import Testing

@Suite("The app for parents on the monitor: its API over the real monitor service")
struct MonitorWebAppTests {
    @Test("first launch: the disclaimer, then the name; both remembered across a restart")
    func preferencesRemembered() async throws {
        let database = try CribCallDatabase.inMemory()
        let rig = try await WebRig(database: database)
        let first = try await rig.state()
        #expect(first["role"]?.stringValue == "monitor")
        #expect(first["app"]?["disclaimerAccepted"]?.boolValue == false)
        #expect(first["app"]?["alertSound"]?.stringValue == "calm-chime")
        #expect(first["app"]?["notifications"]?.boolValue == true)
        let saved = try await rig.post(
            "api/app", #"{"disclaimerAccepted": true, "babyName": " Liam ", "notifications": false}"#)
        #expect(saved.status == 200)
        #expect(try rig.json(saved)["app"]?["babyName"]?.stringValue == "Liam")
        #expect(try rig.json(saved)["app"]?["notifications"]?.boolValue == false)
        await rig.stop()

        let again = try await WebRig(database: database)
        let state = try await again.state()
        #expect(state["app"]?["disclaimerAccepted"]?.boolValue == true)
        #expect(state["app"]?["babyName"]?.stringValue == "Liam")
        #expect(state["app"]?["notifications"]?.boolValue == false)
        await again.stop()
    }

    @Test("bad preferences are refused with what to send, and nothing of the request is stored")
    func preferencesRefused() async throws {
        let rig = try await WebRig()
        let cases: [(String, String)] = [
            (#"{"babyName": "   "}"#, "the baby's name is required"),
            (#"{"babyName": "\#(String(repeating: "a", count: 41))"}"#, "1 to 40 characters"),
            (#"{"volume": "loud"}"#, "volume must be a whole number"),
            (#"{"volume": 101}"#, "volume must be in 0...100"),
            (#"{"alertSound": "siren"}"#, "calm-chime, soft-melody or clear-pulse"),
            (#"{"colour": "red"}"#, "unknown preference colour"),
            (#"{"volume": 10, "vibration": "buzz"}"#, "heartbeat, sos or continuous"),
            (#"{"notifications": "off"}"#, "notifications must be true or false"),
            (#"[1]"#, "must be a JSON object"),
            (#"{"#, "not JSON"),
        ]
        for (body, message) in cases {
            let answer = try await rig.post("api/app", body)
            #expect(answer.status == 400, "\(body)")
            #expect(try rig.json(answer)["error"]?.stringValue?.contains(message) == true, "\(body): \(answer.text)")
        }
        #expect(try rig.database.appPreferences() == AppPreferences())
        let form = try await LoopbackHTTP.post(
            rig.server.url + "api/app", "volume=1", contentType: "application/x-www-form-urlencoded")
        #expect(form.status == 415)
        let huge = try await rig.post(
            "api/app", #"{"sleepLocation": ""# + String(repeating: "a", count: 20_000) + #""}"#)
        #expect(huge.status == 413)
        await rig.stop()
    }

    @Test("the sleep area drawn in the app is the one the detectors use; bad areas are refused")
    func sleepArea() async throws {
        let rig = try await WebRig()
        let saved = try await rig.post("api/settings", #"{"sleepArea": {"x": 0.2, "y": 0.1, "w": 0.6, "h": 0.8}}"#)
        #expect(saved.status == 200)
        let area = try rig.json(saved)["settings"]?["sleepArea"]
        #expect(area?["x"]?.doubleValue == 0.2 && area?["h"]?.doubleValue == 0.8)
        #expect(try rig.database.monitorSettings().sleepArea == "0.2,0.1,0.6,0.8")
        try await eventually("the detectors to use the new area") {
            await rig.service.currentSettings.sleepArea == "0.2,0.1,0.6,0.8"
        }
        for body in [
            #"{"sleepArea": {"x": 0.9, "y": 0, "w": 0.5, "h": 0.5}}"#,
            #"{"sleepArea": {"x": 0, "y": 0, "w": 0.01, "h": 1}}"#,
            #"{"sleepArea": "0,0,1,1"}"#, #"{"stillnessMinutes": 0}"#, #"{"safetyAlerts": "no"}"#,
        ] {
            let refused = try await rig.post("api/settings", body)
            #expect(refused.status == 400, "\(body)")
        }
        #expect(try rig.database.monitorSettings().sleepArea == "0.2,0.1,0.6,0.8")
        await rig.stop()
    }

    @Test("an alert: refused while paused; raised when active, pushed to the page, acted on, in the history")
    func alertFlow() async throws {
        let rig = try await WebRig()
        let paused = try await rig.post("api/trigger", #"{"kind": "face_covered"}"#)
        #expect(paused.status == 409)
        #expect(try rig.json(paused)["error"]?.stringValue?.contains("monitoring is paused") == true)
        #expect(try await rig.post("api/trigger", #"{"kind": "fire"}"#).status == 400)

        try await rig.activate()
        let raised = try await rig.post("api/trigger", #"{"kind": "face_covered"}"#)
        #expect(raised.status == 200)
        let alert = try rig.json(raised)
        let alertId = try #require(alert["alertId"]?.stringValue)
        #expect(alert["title"]?.stringValue == "Baby's face may be covered")
        #expect(alert["tag"]?.stringValue == "SAFETY ALERT" && alert["state"]?.stringValue == "open")
        #expect(
            alert["buttons"]?.arrayValue?.compactMap { $0["label"]?.stringValue } == [
                "View live camera", "I am checking", "Mark as okay",
            ])
        let alerts = try await rig.state()["alerts"]?.arrayValue ?? []
        #expect(alerts.count == 1, "one alert, however it reached the app")

        let okay = try await rig.post("api/alerts/\(alertId)/action", #"{"action": "okay"}"#)
        #expect(okay.status == 200)
        #expect(try rig.json(okay)["state"]?.stringValue == "okay")
        #expect(try rig.json(okay)["by"]?.stringValue == "this monitor")
        #expect(try await rig.post("api/alerts/nope/action", #"{"action": "okay"}"#).status == 404)
        #expect(try await rig.post("api/alerts/\(alertId)/action", #"{"action": "panic"}"#).status == 400)

        let history = try rig.json(try await rig.get("api/history?range=tonight"))
        let titles = history["events"]?.arrayValue?.compactMap { $0["title"]?.stringValue } ?? []
        #expect(titles.contains("Face may have been covered") && titles.contains("Monitoring started"))
        let details = history["events"]?.arrayValue?.compactMap { $0["detail"]?.stringValue } ?? []
        #expect(details.contains("Marked as okay by this monitor; monitoring continued."))
        #expect(history["summary"]?["text"]?.stringValue == "Monitoring continued after 1 alert")
        #expect(try await rig.get("api/history?range=yesterday-ish").status == 400)
        await rig.stop()
    }

    @Test("monitoring unable to judge for minutes is a notice in the app, closed by an OK or when it judges again")
    func cannotJudgeNotice() async throws {
        let rig = try await WebRig()
        try await rig.activate()
        await rig.app.observe(.cannotJudge(reason: "too dark to judge", minutes: 3))
        let notice = try #require(try await rig.state()["alerts"]?.arrayValue?.first)
        #expect(notice["kind"]?.stringValue == "cannot_judge" && notice["state"]?.stringValue == "open")
        #expect(notice["local"]?.boolValue == true && notice["severity"]?.stringValue == "medium")
        #expect(notice["title"]?.stringValue == "Monitoring cannot see your baby")
        #expect(notice["body"]?.stringValue?.hasPrefix("For 3 minutes now: too dark to judge.") == true)
        await rig.app.observe(.cannotJudge(reason: "too dark to judge", minutes: 3))
        #expect(try await rig.state()["alerts"]?.arrayValue?.count == 1, "one notice per spell")
        await rig.app.observe(.judgingAgain)
        let closed = try #require(try await rig.state()["alerts"]?.arrayValue?.first)
        #expect(closed["state"]?.stringValue == "okay" && closed["note"]?.stringValue == "Monitoring can see again.")

        await rig.app.observe(.cannotJudge(reason: "camera disconnected", minutes: 3))
        let second = try #require(try await rig.state()["alerts"]?.arrayValue?.first)
        let id = try #require(second["alertId"]?.stringValue)
        let okay = try await rig.post("api/alerts/\(id)/action", #"{"action": "okay"}"#)
        #expect(okay.status == 200, "\(okay.text)")
        #expect(try rig.json(okay)["state"]?.stringValue == "okay")
        await rig.stop()
    }

    @Test("what raises an alert is set from the app (FR7): level, duration, pause, crying, the stream on a sound")
    func detectionSettings() async throws {
        let rig = try await WebRig()
        let saved = try await rig.post(
            "api/settings",
            #"{"threshold": 45, "minDurationMs": 1000, "cooldownSec": 30, "crySensitivity": "high", "autoStream": "audio_video", "autoStreamSec": 60}"#
        )
        #expect(saved.status == 200, "\(saved.text)")
        let settings = try rig.json(saved)["settings"]
        #expect(settings?["threshold"]?.doubleValue == 45 && settings?["autoStream"]?.stringValue == "audio_video")
        #expect(settings?["autoStreamSec"]?.doubleValue == 60 && settings?["crySensitivity"]?.stringValue == "high")
        try await eventually("the monitor to use them") {
            let now = await rig.service.currentSettings
            return now.threshold == 45 && now.minDurationMs == 1000 && now.cooldownSec == 30
                && now.autoStream == .audioVideo && now.autoStreamSec == 60
        }
        for (body, words) in [
            (#"{"autoStream": "video"}"#, "autoStream must be none, audio or audio_video"),
            (#"{"autoStreamSec": 1}"#, "autoStreamSec must be in 5...600"),
            (#"{"threshold": 101}"#, "threshold must be in 0...100"),
        ] {
            let refused = try await rig.post("api/settings", body)
            #expect(refused.status == 400 && refused.text.contains(words), "\(body): \(refused.text)")
        }
        #expect(try rig.database.monitorSettings().threshold == 45, "nothing of a refused change is stored")
        await rig.stop()
    }

    @Test("the page hears the state at once and every change: an alert, then a camera unplugged within 2 s")
    func pushedState() async throws {
        let rig = try await WebRig()
        try await rig.activate()
        let events = Task {
            try await LoopbackHTTP.stream(rig.server.url + "api/events", timeout: .seconds(30)) { text in
                text.contains("\"reason\":\"camera disconnected\"")
            }
        }
        try await Task.sleep(for: .milliseconds(300))
        _ = try await rig.post("api/trigger", #"{"kind": "crying"}"#)
        await rig.camera.stopShowing()
        rig.camera.unplug("camera disconnected")
        let text = try await events.value
        let states = text.components(separatedBy: "\n\n").filter { $0.hasPrefix("event: state") }
            .compactMap { try? JSONParser().parse(String($0.dropFirst("event: state\ndata: ".count))) }
        #expect(states.first?["safety"]?["monitoring"]?.stringValue == "active")
        #expect(states.contains { $0["alerts"]?[0]?["title"]?.stringValue == "Crying detected" })
        #expect(states.last?["safety"]?["monitoring"]?.stringValue == "paused")
        #expect(states.last?["safety"]?["reason"]?.stringValue == "camera disconnected")
        await rig.stop()
    }

    @Test("the live picture: a JPEG while active, never a stale one while paused")
    func picture() async throws {
        let rig = try await WebRig()
        let waiting = try await rig.get("api/camera.jpg")
        #expect(waiting.status == 503)
        #expect(try rig.json(waiting)["error"]?.stringValue?.hasPrefix("Live view unavailable") == true)
        try await rig.activate()
        let live = try await rig.get("api/camera.jpg")
        #expect(live.status == 200 && live.headers["content-type"] == "image/jpeg")
        #expect(live.body == rig.camera.evidence)
        await rig.camera.stopShowing()
        rig.camera.unplug("camera disconnected")
        try await eventually("the picture to stop") { (try? await rig.get("api/camera.jpg"))?.status == 503 }

        #expect(try await rig.post("api/camera/reconnect").status == 200)
        #expect(rig.camera.reconnections == 1)
        await rig.stop()

        let blind = try await WebRig(camera: false)
        #expect(try await blind.post("api/camera/reconnect").status == 503)
        let none = try await blind.get("api/camera.jpg")
        #expect(none.status == 503)
        #expect(try blind.json(none)["error"]?.stringValue?.contains("--safety") == true)
        #expect(try await blind.state()["camera"]?["watched"]?.boolValue == false)
        await blind.stop()
    }

    @Test(
        "the final setup check passes only with pictures, light and a quiet room, and says what to change; without a camera it checks the noise only"
    )
    func calibration() async throws {
        let rig = try await WebRig()
        try await rig.activate()
        let started = try rig.json(try await rig.post("api/calibration"))
        #expect(started["done"]?.boolValue == false)
        #expect(
            started["checks"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == [
                "camera", "light", "placement", "noise",
            ])
        try await eventually("the check to finish", timeout: .seconds(15)) {
            (try? rig.json(try await rig.get("api/calibration")))?["done"]?.boolValue == true
        }
        let finished = try rig.json(try await rig.get("api/calibration"))
        // No microphone in this rig: the room's noise cannot be judged, so the check must not pass.
        #expect(finished["progress"]?.doubleValue == 100)
        #expect(finished["ok"]?.boolValue == false)
        let states = Dictionary(
            uniqueKeysWithValues: (finished["checks"]?.arrayValue ?? []).map {
                ($0["id"]?.stringValue ?? "", $0["state"]?.stringValue ?? "")
            })
        #expect(states == ["camera": "passed", "light": "passed", "placement": "passed", "noise": "failed"])
        #expect(finished["checks"]?[3]?["detail"]?.stringValue == "No sound from the microphone yet.")
        await rig.stop()

        let blind = try await WebRig(camera: false)
        _ = try await blind.post("api/calibration")
        try await eventually("the check to finish", timeout: .seconds(15)) {
            (try? blind.json(try await blind.get("api/calibration")))?["done"]?.boolValue == true
        }
        // Without a camera (an audio-only monitor) the room's noise is the only check; no microphone here, so it
        // fails, saying why.
        let audioOnly = try blind.json(try await blind.get("api/calibration"))
        #expect(audioOnly["ok"]?.boolValue == false)
        #expect(audioOnly["checks"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["noise"])
        #expect(audioOnly["checks"]?[0]?["detail"]?.stringValue == "No sound from the microphone yet.")
        await blind.stop()
    }

    @Test("pairing: a QR code on request; revoking an unknown listener says so")
    func pairing() async throws {
        let rig = try await WebRig()
        let shown = try rig.json(try await rig.post("api/pairing/qr"))
        let qr = shown["pairing"]?["qr"]
        #expect(qr?["svg"]?.stringValue?.hasPrefix("<svg") == true)
        #expect(qr?["text"]?.stringValue?.isEmpty == false)
        #expect((qr?["expiresAt"]?.doubleValue ?? 0) > Date().timeIntervalSince1970 * 1000)
        let unknown = try await rig.post("api/listeners/nobody/revoke")
        #expect(unknown.status == 404)
        await rig.stop()
    }

    @Test("the live view: an offer with its candidates, the page's answer and candidates, flowing, ended")
    func liveView() async throws {
        let rig = try await WebRig()
        let offer = try rig.json(try await rig.post("api/live", #"{"mediaType": "audio_video"}"#))
        let sessionId = try #require(offer["sessionId"]?.stringValue)
        #expect(offer["sdp"]?.stringValue?.contains("m=video") == true)
        let offered = offer["candidates"]?.arrayValue ?? []
        let peer = try #require(rig.media.peers(sessionId: sessionId).first)

        let answer =
            #"{"sdp": "v=0\r\n", "candidates": [{"candidate": "candidate:1 1 UDP 1 10.0.0.2 5000 typ host", "sdpMid": "0", "sdpMLineIndex": 0}]}"#
        let replied = try await rig.post("api/live/\(sessionId)/answer", answer)
        #expect(replied.status == 200)
        let later = try rig.json(replied)["candidates"]?.arrayValue ?? []
        #expect(offered.count + later.count == 2, "every candidate once, with the offer or the reply; no end marker")
        #expect(peer.remoteDescription == "v=0\r\n")
        #expect(peer.remoteCandidates.map(\.candidate) == ["candidate:1 1 UDP 1 10.0.0.2 5000 typ host", ""])
        try await eventually("the view to flow") {
            (try? await rig.state())?["live"]?[0]?["flowing"]?.boolValue == true
        }
        #expect(try await rig.post("api/live/nope/answer", answer).status == 409)
        #expect(try await rig.post("api/live", #"{"mediaType": "smell"}"#).status == 400)

        #expect(try await rig.post("api/live/\(sessionId)/end").status == 200)
        #expect(peer.stopCalls == 1)
        #expect(try await rig.state()["live"]?.arrayValue?.isEmpty == true)

        // At most two at once: a third ends the oldest.
        var sessions: [String] = []
        for _ in 0..<3 {
            sessions.append(try rig.json(try await rig.post("api/live"))["sessionId"]?.stringValue ?? "")
        }
        #expect(rig.media.peers(sessionId: sessions[0]).first?.stopCalls == 1)
        #expect(try await rig.state()["live"]?.arrayValue?.count == 2)
        await rig.stop()

        let blind = try await WebRig(camera: false)
        let refused = try await blind.post("api/live", #"{"mediaType": "audio_video"}"#)
        #expect(refused.status == 503)
        #expect(try blind.json(refused)["error"]?.stringValue?.contains("--safety") == true)
        await blind.stop()
    }

    @Test("the profile changes the words (the alerts' titles name the baby), never detection")
    func profileLeavesDetectionAlone() async throws {
        let rig = try await WebRig()
        let before = try rig.database.monitorSettings()
        let saved = try await rig.post(
            "api/app",
            #"{"babyName": "Ada", "sleepLocation": "Bedroom", "volume": 30, "alertSound": "soft-melody", "disclaimerAccepted": true, "setupComplete": true}"#
        )
        #expect(saved.status == 200)
        #expect(try rig.database.monitorSettings() == before)
        #expect(await rig.service.currentSettings == before)
        try await rig.activate()
        let raised = try rig.json(try await rig.post("api/trigger", #"{"kind": "face_covered"}"#))
        #expect(raised["title"]?.stringValue == "Ada's face may be covered")
        #expect(raised["body"]?.stringValue == "Please check the sleep area to make sure Ada's face is clear.")
        let rolled = try rig.json(try await rig.post("api/trigger", #"{"kind": "on_stomach"}"#))
        #expect(rolled["title"]?.stringValue == "Ada may have rolled onto their stomach")
        #expect(try await rig.state()["alerts"]?[1]?["title"]?.stringValue == "Ada's face may be covered")
        await rig.stop()
    }

    @Test("the app's files load nothing from elsewhere: no absolute URL, no inline script, the policy says self only")
    func offlineAssets() async throws {
        let directory = Fixtures.repositoryRoot.appendingPathComponent("Sources/CribCall/Services/CribCallWeb/Public")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(names.contains("index.html") && names.count >= 3)
        var findings: [String] = []
        for name in names where ["html", "js", "css", "svg"].contains((name as NSString).pathExtension) {
            let text = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
            // The SVG namespace is a name, not a resource.
            let scrubbed = text.replacingOccurrences(of: "http://www.w3.org/2000/svg", with: "")
            for pattern in ["http://", "https://", "url(//", "src=\"//", "href=\"//", "@import"]
            where scrubbed.contains(pattern) {
                findings.append("\(name): \(pattern)")
            }
            if name.hasSuffix(".html") {
                for tag in text.components(separatedBy: "<script").dropFirst()
                where !tag.hasPrefix(" src=") && !tag.hasPrefix(" type=\"module\" src=") {
                    findings.append("\(name): inline script \(tag.prefix(30))")
                }
            }
        }
        #expect(findings.isEmpty, "\(findings)")
        let rig = try await WebRig()
        let page = try await rig.get("")
        #expect(page.headers["content-security-policy"]?.hasPrefix("default-src 'self';") == true)
        await rig.stop()
    }
}
