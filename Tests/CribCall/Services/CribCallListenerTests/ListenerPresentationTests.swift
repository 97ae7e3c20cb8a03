import CanonicalJSON
import CribCallListener
import CribCallMonitor
import CribCallProtocol
import Foundation
import Synchronization
import Testing

/// What `cribcall listen` prints for each event, and its stream controls, without a process.
@Suite("Listener output and stream controls")
struct ListenerPresentationTests {
    @Test("every event has its --json object with an event field, and a sentence for people")
    func rendering() throws {
        let noise = NoiseEvent(
            monitorId: "m1", timestamp: 1_750_000_000_000, peakLevel: 82, seq: 7, eventId: "e7", replayed: true)
        let cases: [(ListenerEvent, String, String)] = [
            (
                .connected(monitorId: "m1", monitorName: "Nursery", address: "10.0.0.2:48080"), "connected",
                "Connected to \"Nursery\" at 10.0.0.2:48080."
            ),
            (
                .linkLost(monitorId: "m1", monitorName: "Nursery", reason: "no answer for 15 s"), "link_lost",
                "⚠️  Lost the link to \"Nursery\" (no answer for 15 s); reconnecting…"
            ),
            (
                .linkRestored(monitorId: "m1", monitorName: "Nursery"), "link_restored",
                "Link to \"Nursery\" is back; missed alerts follow."
            ),
            (
                .unauthorized(monitorId: "m1", monitorName: "Nursery", message: "revoked"), "unauthorized",
                "\"Nursery\" no longer accepts this listener: revoked"
            ),
            (
                .streamStarted(monitorId: "m1", sessionId: "0123456789abcdef", mediaType: .audioVideo),
                "stream_started",
                "▶️  Live audio and video (stream 01234567)."
            ),
            (
                .streamEndingSoon(monitorId: "m1", sessionId: "0123456789abcdef", secondsRemaining: 5),
                "stream_ending_soon", "Stream 01234567 ends in 5 s unless pinned."
            ),
            (
                .streamEnded(monitorId: "m1", sessionId: "0123456789abcdef", reason: "ended by the listener"),
                "stream_ended", "Stream 01234567 ended (ended by the listener)."
            ),
        ]
        for (event, name, text) in cases {
            #expect(event.json["event"] == .string(name))
            #expect(event.json["monitorId"] == .string("m1"))
            #expect(event.text == text)
        }
        let alert = ListenerEvent.noise(monitorId: "m1", monitorName: "Nursery", event: noise)
        #expect(
            alert.json.canonicalString
                == #"{"event":"noise","eventId":"e7","monitorId":"m1","monitorName":"Nursery","peakLevel":82,"replayed":true,"seq":7,"timestamp":1750000000000}"#
        )
        #expect(alert.text.hasPrefix("🔔 Missed alert from \"Nursery\" — peak level 82 (#7, "))
        let started = ListenerEvent.streamStarted(monitorId: "m1", sessionId: "s", mediaType: .audio)
        #expect(started.json["mediaType"] == .string("audio"))
    }

    @Test("terminal keys map to stream controls; other keys do nothing")
    func keys() {
        #expect(StreamControls.Key(byte: UInt8(ascii: "l")) == .listen)
        #expect(StreamControls.Key(byte: UInt8(ascii: "v")) == .video)
        #expect(StreamControls.Key(byte: UInt8(ascii: "p")) == .pin)
        #expect(StreamControls.Key(byte: UInt8(ascii: "e")) == .end)
        #expect(StreamControls.Key(byte: UInt8(ascii: "x")) == nil)
        #expect(StreamControls.Key(byte: UInt8(ascii: "L")) == nil)
    }

    @Test("--open starts a stream once on connect; e ends it, l opens another, and the monitor sees both")
    func controls() async throws {
        let rig = try await StreamRig()
        let failures = Mutex<[String]>([])
        let controls = StreamControls(service: rig.listener, mediaType: .audio, monitorId: rig.monitorId) { failure in
            failures.withLock { $0.append(failure) }
        }
        let connected = ListenerEvent.connected(monitorId: rig.monitorId, monitorName: "Nursery", address: "nursery")
        await controls.observe(connected, openOnConnect: true)
        let first = try #require(await controls.current, "--open opened a stream")
        await controls.observe(connected, openOnConnect: true)
        #expect(await controls.current == first, "a reconnect does not open a second stream")
        #expect(
            await rig.monitorEvents.wait {
                if case .streamStarted(first, _, .audio, false) = $0 { true } else { false }
            } != nil)
        await controls.press(.end)
        #expect(
            await rig.monitorEvents.wait { if case .streamEnded(first, _) = $0 { true } else { false } } != nil)
        await controls.observe(
            .streamEnded(monitorId: rig.monitorId, sessionId: first, reason: "ended"), openOnConnect: true)
        #expect(await controls.current == nil)
        await controls.press(.video)
        let second = try #require(await controls.current)
        #expect(second != first)
        #expect(
            await rig.monitorEvents.wait {
                if case .streamStarted(second, _, .audioVideo, false) = $0 { true } else { false }
            } != nil)
        #expect(failures.withLock { $0 }.isEmpty)
        await rig.stop()
    }
}
