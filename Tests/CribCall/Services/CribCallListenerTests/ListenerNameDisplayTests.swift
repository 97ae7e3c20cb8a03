import CanonicalJSON
import CribCallListener
import CribCallProtocol
import DesktopNotifications
import Testing

/// A monitor's name comes from its TXT record or its pairing, so anyone on the LAN chooses it (issue 17 item 6):
/// `cribcall listen` shows it, in text and on the desktop, without what could drive the terminal or reorder the line;
/// `--json` keeps it exact.
@Suite("A monitor's name as the listener shows it")
struct ListenerNameDisplayTests {
    static let hostile = "Nurs\u{1B}[2Jery\u{202E}gpj.exe"
    static let shown = "Nurs[2Jerygpj.exe"
    static let noise = NoiseEvent(
        monitorId: "m-1", timestamp: 1_700_000_000_000, peakLevel: 84, seq: 7, eventId: "e-7", kind: "noise")

    /// Every event that names its monitor (the alert update also names who acted: a name the monitor relays).
    static let events: [ListenerEvent] = [
        .connected(monitorId: "m-1", monitorName: hostile, address: "10.0.0.2:48080"),
        .noise(monitorId: "m-1", monitorName: hostile, event: noise),
        .linkLost(monitorId: "m-1", monitorName: hostile, reason: "silence"),
        .linkRestored(monitorId: "m-1", monitorName: hostile),
        .unauthorized(monitorId: "m-1", monitorName: hostile, message: "revoked"),
        .safetyStatus(
            monitorId: "m-1", monitorName: hostile, status: SafetyStatus(seq: 1, monitoring: .paused, updatedAt: 1)),
        .safetyAlert(
            monitorId: "m-1", monitorName: hostile,
            alert: SafetyAlert(
                seq: 2, alertId: "a-2", kind: .faceCovered, detectedAt: 1_700_000_000_000, confidence: 0.9,
                detector: "test")),
        .alertUpdated(
            monitorId: "m-1", monitorName: hostile,
            update: AlertUpdated(alertId: "a-2", state: .checking, by: hostile, at: 1_700_000_000_000)),
    ]

    static func hasHidden(_ text: String) -> Bool {
        text.unicodeScalars.contains(where: PeerName.isHidden)
    }

    @Test("the text line shows the name without escape sequences or bidirectional controls", arguments: events)
    func text(_ event: ListenerEvent) {
        #expect(!Self.hasHidden(event.text), "\(event.text.debugDescription)")
        #expect(event.text.contains(Self.shown), "\(event.text.debugDescription)")
    }

    @Test("the desktop notification shows the name the same way", arguments: events)
    func notification(_ event: ListenerEvent) throws {
        guard case .connected = event else {
            let bubble = try #require(event.desktopNotification)
            let words = bubble.summary + " " + bubble.body
            #expect(!Self.hasHidden(words), "\(words.debugDescription)")
            #expect(words.contains(Self.shown), "\(words.debugDescription)")
            #expect(bubble.tag?.hasPrefix("m-1") == true, "the tag keeps the monitor's id: \(bubble.tag ?? "none")")
            return
        }
        #expect(event.desktopNotification == nil)
    }

    @Test("--json keeps the name exact, and JSON escaping keeps its ESC off the terminal", arguments: events)
    func json(_ event: ListenerEvent) throws {
        #expect(event.json["monitorName"] == .string(Self.hostile))
        let line = event.json.canonicalString
        #expect(!line.utf8.contains(0x1B), "a raw ESC reaches the terminal: \(line.debugDescription)")
        #expect(line.contains(#"Nurs\u001b[2Jery"#), "\(line.debugDescription)")
        let parsed = try JSONParser().parse(Array(line.utf8))
        #expect(parsed["monitorName"] == .string(Self.hostile), "the parsed name is exact")
    }
}
