import CanonicalJSON
import ControlTransport
import CribCallListener
import CribCallProtocol
import CribCallStore
import CribCallWeb
import DeviceIdentity
import Foundation
import LocalWebApp
import StreamMedia
import TestSupport
import Testing

/// The app for parents on a parent's machine, against a real monitor service over the in-memory transport: pairing
/// by PIN from the page, the monitor's state, an alert acted on, a stream the page plays.
@Suite("The app for parents on the listener: pairing, monitors, alerts, streams in the page")
struct ListenerWebAppTests {
    /// A listener app (named Mum) beside a monitor rig.
    struct Parent {
        let app: ListenerWebApp
        let server: LocalWebServer
        let listening: Task<Void, Never>

        init(
            _ rig: WebRig, database: CribCallDatabase? = nil, cannotJudgeAfter: Duration = .seconds(180)
        ) async throws {
            let identity = try DeviceIdentity.generate(now: Date())
            let app = ListenerWebApp(
                identity: identity, name: "Mum", database: try database ?? CribCallDatabase.inMemory(),
                connector: rig.network.connector(identity: PeerCertificate(identity: identity)), fallback: nil,
                browser: nil, version: "test", cannotJudgeAfter: cannotJudgeAfter)
            self.app = app
            await app.start()
            let service = app.service
            listening = Task { for await event in await service.listen(keepOpen: true) { await app.observe(event) } }
            server = try await app.serve(port: 0)
        }

        func state() async throws -> JSONValue {
            try JSONParser().parse(try await LoopbackHTTP.get(server.url + "api/state").body)
        }

        func post(_ path: String, _ body: String = "{}") async throws -> LoopbackHTTP.Answer {
            try await LoopbackHTTP.post(server.url + path, body)
        }

        func stop() async {
            listening.cancel()
            await app.closeStreams()
            await server.close()
        }
    }

    /// Pairs the parent's app with the rig's monitor through the API, as the page does.
    static func pair(_ parent: Parent, with rig: WebRig) async throws {
        let body =
            #"{"host": "nursery", "port": 48080, "fingerprint": "\#(rig.identity.fingerprint.hex)", "name": "Nursery"}"#
        #expect(try await parent.post("api/pair", body).status == 200)
        try await eventually("the PIN to be asked for") {
            (try? await parent.state())?["pairing"]?["state"]?.stringValue == "enter_pin"
        }
        let pin = try #require(try await rig.state()["pairing"]?["pin"]?["pin"]?.stringValue)
        #expect(try await parent.post("api/pair/pin", #"{"pin": "12"}"#).status == 400)
        #expect(try await parent.post("api/pair/pin", #"{"pin": "\#(pin)"}"#).status == 200)
        try await eventually("the pairing to finish") {
            (try? await parent.state())?["pairing"]?["state"]?.stringValue == "paired"
        }
        try await eventually("the monitor to be connected") {
            (try? await parent.state())?["monitors"]?[0]?["connection"]?.stringValue == "connected"
        }
    }

    @Test("paired from the page by PIN; the monitor's status shows; an alert acted on reaches the monitor")
    func pairingAndAlerts() async throws {
        let rig = try await WebRig()
        let parent = try await Parent(rig)
        let empty = try await parent.state()
        #expect(empty["role"]?.stringValue == "listener" && empty["monitors"]?.arrayValue?.isEmpty == true)
        #expect(
            try await parent.post("api/pair", #"{"host": "nursery", "port": 48080, "fingerprint": "zz"}"#).status == 409
        )

        try await Self.pair(parent, with: rig)
        let monitor = try #require(try await parent.state()["monitors"]?[0])
        #expect(monitor["name"]?.stringValue == "Nursery")
        #expect(try await rig.state()["listeners"]?[0]?["name"]?.stringValue == "Mum")

        try await rig.activate()
        try await eventually("the monitor's status to show") {
            (try? await parent.state())?["monitors"]?[0]?["safety"]?["monitoring"]?.stringValue == "active"
        }
        let raised = try rig.json(try await rig.post("api/trigger", #"{"kind": "on_stomach"}"#))
        let alertId = try #require(raised["alertId"]?.stringValue)
        try await eventually("the alert to reach the parent") {
            (try? await parent.state())?["alerts"]?[0]?["alertId"]?.stringValue == alertId
        }
        let shown = try #require(try await parent.state()["alerts"]?[0])
        #expect(shown["monitorName"]?.stringValue == "Nursery" && shown["state"]?.stringValue == "open")
        let monitorId = try #require(monitor["monitorId"]?.stringValue)
        #expect(
            try await parent.post("api/alerts/\(monitorId)/\(alertId)/action", #"{"action": "okay"}"#).status == 200)
        try await eventually("the monitor to know it is okay, by Mum") {
            let alert = (try? await rig.state())?["alerts"]?[0]
            return alert?["state"]?.stringValue == "okay" && alert?["by"]?.stringValue == "Mum"
        }
        try await eventually("the parent to see it too") {
            (try? await parent.state())?["alerts"]?[0]?["state"]?.stringValue == "okay"
        }
        #expect(
            try await parent.post("api/alerts/\(monitorId)/\(alertId)/action", #"{"action": "wave"}"#).status == 400)

        // What the parent heard stays, in the history of tonight and in the activity, with the monitor's name.
        let activity = try #require(try await parent.state()["activity"]?[0])
        #expect(activity["title"]?.stringValue == "Baby may have rolled onto their stomach")
        #expect(activity["monitorName"]?.stringValue == "Nursery")
        let history = try JSONParser().parse(try await LoopbackHTTP.get(parent.server.url + "api/history").body)
        let details = history["events"]?.arrayValue?.compactMap { $0["detail"]?.stringValue } ?? []
        #expect(details.contains("Marked as okay by Mum; monitoring continued."), "\(details)")
        #expect(history["summary"]?["text"]?.stringValue == "Monitoring continued after 1 alert")
        #expect(try await LoopbackHTTP.get(parent.server.url + "api/history?range=someday").status == 400)

        #expect(try await parent.post("api/monitors/\(monitorId)/forget").status == 200)
        #expect(try await parent.state()["monitors"]?.arrayValue?.isEmpty == true)
        #expect(try await parent.post("api/monitors/\(monitorId)/forget").status == 404)
        await parent.stop()
        await rig.stop()
    }

    /// Each body is a type (WebRequests.swift) decoded strictly: a field of the wrong type, a missing one or an extra
    /// one where a single field is expected is refused with the shape to send, before anything is done.
    @Test("request bodies of the wrong shape are refused with what to send, and nothing is started or stored")
    func wrongShapes() async throws {
        let rig = try await WebRig()
        let parent = try await Parent(rig)
        let fingerprint = rig.identity.fingerprint.hex
        let refusals: [(String, String, String)] = [
            ("api/settings", #"{"onNoise": "open", "also": 1}"#, #"send {"onNoise": "notify" or "open"}"#),
            ("api/settings", #"{"onNoise": "shout"}"#, #"send {"onNoise": "notify" or "open"}"#),
            ("api/pair", #"{"host": "nursery", "port": 48080.5, "fingerprint": "\#(fingerprint)"}"#, #"send {"host""#),
            ("api/pair", #"{"host": "nursery", "port": "48080", "fingerprint": "\#(fingerprint)"}"#, #"send {"host""#),
            ("api/pair", #"{"port": 48080, "fingerprint": "\#(fingerprint)"}"#, #"send {"host""#),
            ("api/pair/qr", #"{"qr": 7}"#, #"send {"qr""#),
            ("api/pair/pin", #"{"pin": 123456}"#, #"send {"pin""#),
            ("api/streams", #"{"mediaType": "audio"}"#, #"send {"monitorId""#),
            ("api/streams", #"{"monitorId": "m", "mediaType": "smell"}"#, #"send {"monitorId""#),
            ("api/streams/s1/answer", #"{"sdp": "v=0", "candidates": [{"sdpMid": "0"}]}"#, #"send {"sdp""#),
            ("api/alerts/m/a/action", #"{"action": ["okay"]}"#, "action must be checking, okay or mute"),
        ]
        for (path, body, words) in refusals {
            let refused = try await parent.post(path, body)
            let said = try JSONParser().parse(refused.body)["error"]?.stringValue ?? ""
            #expect(refused.status == 400 && said.contains(words), "\(path) \(body): \(refused.text)")
        }
        let state = try await parent.state()
        #expect(state["pairing"]?["state"]?.stringValue != "enter_pin", "no pairing was started")
        #expect(state["monitors"]?.arrayValue?.isEmpty ?? true)
        #expect(try await parent.post("api/settings", #"{"onNoise": "open"}"#).status == 200, "the right shape works")
        await parent.stop()
        await rig.stop()
    }

    @Test("paired from the page by the pairing code's text; a damaged, a used or no code says what to do")
    func pairingByCode() async throws {
        let rig = try await WebRig()
        let parent = try await Parent(rig)
        let refusals: [(String, String)] = [
            (#"{"qr": "  "}"#, "paste the pairing code"),
            (#"{"qr": "hello"}"#, "this is not a CribCall pairing code"),
            (#"{"address": "nursery"}"#, "the pairing code's text"),
        ]
        for (body, words) in refusals {
            let refused = try await parent.post("api/pair/qr", body)
            #expect(refused.status == 400 && refused.text.contains(words), "\(body): \(refused.text)")
        }
        #expect(try await rig.post("api/pairing/qr").status == 200)
        let code = try #require(try await rig.state()["pairing"]?["qr"]?["text"]?.stringValue)
        // Without discovery on this listener the address is needed, and checked.
        let noAddress = try await parent.post("api/pair/qr", try Self.json(["qr": code]))
        #expect(noAddress.status == 400 && noAddress.text.contains("give the monitor's address"), "\(noAddress.text)")
        let badAddress = try await parent.post("api/pair/qr", try Self.json(["qr": code, "address": "a b:99999"]))
        #expect(badAddress.status == 400 && badAddress.text.contains("host or host:port"), "\(badAddress.text)")

        let started = try await parent.post("api/pair/qr", try Self.json(["qr": code, "address": "nursery:48080"]))
        #expect(started.status == 200, "\(started.text)")
        try await eventually("the pairing by code to finish") {
            (try? await parent.state())?["pairing"]?["state"]?.stringValue == "paired"
        }
        try await eventually("the monitor to be connected") {
            (try? await parent.state())?["monitors"]?[0]?["connection"]?.stringValue == "connected"
        }
        #expect(try await rig.state()["listeners"]?[0]?["name"]?.stringValue == "Mum")

        // The same code again: used, so refused by the monitor, in words.
        let again = try await parent.post("api/pair/qr", try Self.json(["qr": code, "address": "nursery:48080"]))
        #expect(again.status == 200)
        try await eventually("the used code to fail") {
            (try? await parent.state())?["pairing"]?["state"]?.stringValue == "failed"
        }
        let error = try await parent.state()["pairing"]?["error"]?.stringValue ?? ""
        #expect(error.contains("did not accept this code") && error.contains("Show a new code"), "\(error)")
        await parent.stop()
        await rig.stop()
    }

    static func json(_ object: [String: String]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
    }

    @Test("a stream opened from the page: the monitor's offer reaches the page, its answer the monitor; playing, ended")
    func streamInThePage() async throws {
        let rig = try await WebRig()
        let parent = try await Parent(rig)
        try await Self.pair(parent, with: rig)
        let monitorId = try #require(try await parent.state()["monitors"]?[0]?["monitorId"]?.stringValue)

        // A page is open: it receives the stream's signaling.
        let signaling = Task {
            try await LoopbackHTTP.stream(parent.server.url + "api/events", timeout: .seconds(20)) {
                $0.contains(#""type":"offer""#) && $0.contains("a=rtpmap")
            }
        }
        try await Task.sleep(for: .milliseconds(300))
        let opened = try await parent.post(
            "api/streams", #"{"monitorId": "\#(monitorId)", "mediaType": "audio_video"}"#)
        #expect(opened.status == 200)
        let sessionId = try #require(try JSONParser().parse(opened.body)["sessionId"]?.stringValue)
        let text = try await signaling.value
        #expect(text.contains(#""sessionId":"\#(sessionId)""#), "the offer names the stream")
        #expect(text.contains("m=video"))

        #expect(try await parent.post("api/streams/\(sessionId)/flowing").status == 409, "not before its answer")
        let answer =
            #"{"sdp": "v=0\r\n", "candidates": [{"candidate": "candidate:1 1 UDP 1 10.0.0.9 6000 typ host", "sdpMid": "0", "sdpMLineIndex": 0}]}"#
        #expect(try await parent.post("api/streams/\(sessionId)/answer", answer).status == 200)
        #expect(try await parent.post("api/streams/\(sessionId)/answer", answer).status == 409, "one page plays it")
        let sender = try #require(rig.media.peers(sessionId: sessionId).first)
        try await eventually("the monitor's sender to have the page's answer") {
            sender.remoteDescription == "v=0\r\n" && sender.remoteCandidates.contains { !$0.candidate.isEmpty }
        }
        #expect(try await parent.post("api/streams/\(sessionId)/flowing").status == 200)
        try await eventually("the stream to play") {
            (try? await parent.state())?["streams"]?[0]?["state"]?.stringValue == "playing"
        }
        #expect(try await parent.post("api/streams/\(sessionId)/end").status == 200)
        try await eventually("the stream to end") {
            (try? await parent.state())?["streams"]?.arrayValue?.isEmpty == true
        }
        await parent.stop()
        await rig.stop()
    }

    @Test("a stream the monitor is about to stop says when; Keep live takes that back, and a late warning too")
    func endingSoon() async throws {
        let rig = try await WebRig()
        let parent = try await Parent(rig)
        let app = parent.app
        func entry() async throws -> JSONValue? {
            try await parent.state()["streams"]?.arrayValue?.first { $0["sessionId"]?.stringValue == "s1" }
        }
        await app.observe(.streamStarted(monitorId: "m1", sessionId: "s1", mediaType: .audio))
        #expect(try await entry()?["endsAt"] == .null, "no end in sight")
        let warned = Date().timeIntervalSince1970 * 1000
        await app.observe(.streamEndingSoon(monitorId: "m1", sessionId: "s1", secondsRemaining: 5))
        let endsAt = try #require(try await entry()?["endsAt"]?.numberValue?.doubleValue)
        #expect((warned + 4_000...warned + 6_500).contains(endsAt), "\(endsAt - warned) ms ahead")
        await app.streamKept(sessionId: "s1")
        #expect(try await entry()?["endsAt"] == .null, "kept live")
        // a warning that crossed the pin on its way changes nothing
        await app.observe(.streamEndingSoon(monitorId: "m1", sessionId: "s1", secondsRemaining: 5))
        #expect(try await entry()?["endsAt"] == .null, "a stale warning after Keep live")
        await app.observe(.streamEnded(monitorId: "m1", sessionId: "s1", reason: "ended_by_listener"))
        #expect(try await entry() == nil)
        await parent.stop()
        await rig.stop()
    }

    @Test(
        "a noise, a lost link and a refusal are alerts here: one open per monitor and kind, Dismiss closes them, the link back closes its notice saying so"
    )
    func notices() async throws {
        let rig = try await WebRig()
        let parent = try await Parent(rig)
        let app = parent.app
        func alerts(_ kind: String) async throws -> [JSONValue] {
            try await parent.state()["alerts"]?.arrayValue?.filter { $0["kind"]?.stringValue == kind } ?? []
        }
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        for seq in Int64(1)...2 {
            await app.observe(
                .noise(
                    monitorId: "m1", monitorName: "Nursery",
                    event: NoiseEvent(monitorId: "m1", timestamp: now, peakLevel: 72, seq: seq, eventId: "e\(seq)")))
        }
        let noises = try await alerts("noise")
        #expect(noises.map { $0["state"]?.stringValue } == ["open", "okay"], "the newer one replaces it: \(noises)")
        #expect(noises.first?["title"]?.stringValue == "A sound in Nursery")
        #expect(noises.first?["local"] == true && noises.first?["severity"]?.stringValue == "medium")
        let id = try #require(noises.first?["alertId"]?.stringValue)
        #expect(try await parent.post("api/alerts/m1/\(id)/action", #"{"action": "okay"}"#).status == 200)
        #expect(try await alerts("noise").allSatisfy { $0["state"]?.stringValue == "okay" })

        await app.observe(.linkLost(monitorId: "m1", monitorName: "Nursery", reason: "timed out"))
        await app.observe(.linkLost(monitorId: "m1", monitorName: "Nursery", reason: "again"))
        let lost = try await alerts("link_lost")
        #expect(
            lost.count == 1 && lost[0]["state"]?.stringValue == "open" && lost[0]["severity"]?.stringValue == "high")
        #expect(lost[0]["title"]?.stringValue == "Lost the link to Nursery")
        await app.observe(.linkRestored(monitorId: "m1", monitorName: "Nursery"))
        let back = try await alerts("link_lost")
        #expect(
            back[0]["state"]?.stringValue == "okay" && back[0]["note"]?.stringValue == "The link to Nursery is back.")

        await app.observe(.unauthorized(monitorId: "m1", monitorName: "Nursery", message: "this listener was unpaired"))
        let refused = try await alerts("unauthorized")
        #expect(refused.first?["body"]?.stringValue?.contains("pair with Nursery again") == true, "\(refused)")
        await parent.stop()
        await rig.stop()
    }

    @Test(
        "a monitor that cannot judge for the notice's time rings here too; one that judges again closes it; a short pause rings nothing"
    )
    func cannotJudgeNotice() async throws {
        let rig = try await WebRig()
        let parent = try await Parent(rig, cannotJudgeAfter: .milliseconds(300))
        let app = parent.app
        func notices() async throws -> [JSONValue] {
            try await parent.state()["alerts"]?.arrayValue?.filter { $0["kind"]?.stringValue == "cannot_judge" } ?? []
        }
        func status(_ seq: Int64, _ monitoring: MonitoringState, _ reason: String? = nil) -> ListenerEvent {
            .safetyStatus(
                monitorId: "m1", monitorName: "Nursery",
                status: SafetyStatus(seq: seq, monitoring: monitoring, reason: reason, updatedAt: 0))
        }
        // Stale, then active again before the notice's time: nothing rings, then or later.
        await app.observe(status(1, .stale, "too dark to judge"))
        await app.observe(status(2, .active))
        try await Task.sleep(for: .milliseconds(600))
        #expect(try await notices().isEmpty)
        // Stale and still stale (a second status with another reason does not restart the wait): one notice.
        await app.observe(status(3, .stale, "too dark to judge"))
        await app.observe(status(4, .paused, "camera disconnected"))
        try await eventually("the cannot-judge notice") { try await notices().count == 1 }
        let notice = try #require(try await notices().first)
        #expect(notice["state"]?.stringValue == "open")
        #expect(notice["title"]?.stringValue == "Monitoring cannot see your baby")
        #expect(notice["body"]?.stringValue?.contains("camera disconnected") == true, "\(notice)")
        // Judging again closes it, saying so.
        await app.observe(status(5, .active))
        let closed = try #require(try await notices().first)
        #expect(closed["state"]?.stringValue == "okay" && closed["note"]?.stringValue == "Monitoring can see again.")
        await parent.stop()
        await rig.stop()
    }

    @Test(
        "Stop monitoring in the monitor's app: alerts and streams refused there; the parent's app says Monitoring: OFF with a notice; Start: back on"
    )
    func monitoringSwitch() async throws {
        let rig = try await WebRig()
        try await rig.activate()
        let parent = try await Parent(rig)
        try await Self.pair(parent, with: rig)
        func monitor() async throws -> JSONValue? { try await parent.state()["monitors"]?[0] }
        func notices() async throws -> [JSONValue] {
            try await parent.state()["alerts"]?.arrayValue?.filter { $0["kind"]?.stringValue == "monitoring_off" }
                ?? []
        }
        try await eventually("monitoring on, as the monitor said") {
            try await monitor()?["monitoring"]?.stringValue == "on"
        }
        let stopped = try await rig.post("api/settings", #"{"monitoring": false}"#)
        #expect(try stopped.status == 200 && rig.json(stopped)["settings"]?["monitoring"]?.boolValue == false)
        let refused = try await rig.post("api/trigger", #"{"kind": "face_covered"}"#)
        #expect(refused.status == 409 && refused.text.contains("monitoring is turned off"), "\(refused.text)")
        try await eventually("the parent's app told") { try await monitor()?["monitoring"]?.stringValue == "off" }
        let notice = try #require(try await notices().first)
        #expect(
            notice["state"]?.stringValue == "open" && notice["title"]?.stringValue == "Monitoring is off at Nursery")
        let monitorId = try #require(try await monitor()?["monitorId"]?.stringValue)
        let stream = try await parent.post("api/streams", #"{"monitorId": "\#(monitorId)", "mediaType": "audio"}"#)
        #expect(
            stream.status != 200
                && stream.text.contains("declined the stream: monitoring is turned off at the monitor"),
            "\(stream.text)")
        #expect(try await parent.state()["streams"]?.arrayValue?.isEmpty == true)
        #expect(try await rig.post("api/settings", #"{"monitoring": "off"}"#).status == 400, "a boolean, not a word")
        #expect(try await rig.post("api/settings", #"{"monitoring": true}"#).status == 200)
        try await eventually("back on in the parent's app") { try await monitor()?["monitoring"]?.stringValue == "on" }
        let closed = try #require(try await notices().first)
        #expect(
            closed["state"]?.stringValue == "okay" && closed["note"]?.stringValue == "Monitoring is back on at Nursery."
        )
        #expect(try await rig.post("api/trigger", #"{"kind": "face_covered"}"#).status == 200)
        await parent.stop()
        await rig.stop()
    }

    @Test("with no page open a stream cannot play in a page, and the parent is told why")
    func noPage() async throws {
        let rig = try await WebRig()
        let parent = try await Parent(rig)
        try await Self.pair(parent, with: rig)
        let monitorId = try #require(try await parent.state()["monitors"]?[0]?["monitorId"]?.stringValue)
        _ = try await parent.post("api/streams", #"{"monitorId": "\#(monitorId)", "mediaType": "audio"}"#)
        try await eventually("the stream to be given up, saying why") {
            let state = try? await parent.state()
            return state?["streams"]?.arrayValue?.isEmpty == true
                && state?["endedStreams"]?[0]?["reason"]?.stringValue?.contains("open the app") == true
        }
        #expect(try await parent.post("api/streams", #"{"monitorId": "nope", "mediaType": "audio"}"#).status == 409)
        await parent.stop()
        await rig.stop()
    }
}
