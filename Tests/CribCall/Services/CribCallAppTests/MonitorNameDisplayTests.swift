import CanonicalJSON
import CribCallProtocol
import CribCallRuntime
import CribCallStore
import DeviceIdentity
import Foundation
import Testing

@testable import CribCallApp

/// A monitor's name is anyone's to choose on the LAN (its TXT record, its QR code; issue 17 item 6): `cribcall scan`,
/// `cribcall pair` and `cribcall monitors` show it without what could drive the terminal or reorder the line, and
/// their `--json` keeps it exact.
@Suite("A monitor's name as the commands show it")
struct MonitorNameDisplayTests {
    static let hostile = "Nurs\u{1B}[2Jery\u{202E}gpj.exe"
    static let shown = "Nurs[2Jerygpj.exe"
    static let fingerprint = CertificateFingerprint(hex: String(repeating: "ab", count: 32))!

    static func hasHidden(_ text: String) -> Bool {
        text.unicodeScalars.contains(where: PeerName.isHidden)
    }

    static let record = TrustedMonitorRecord(
        monitorId: "0f1e2d3c-0000-4000-8000-000000000001", name: hostile, fingerprint: fingerprint,
        lastKnownHost: "192.0.2.7", lastKnownPort: 48080, lastSeq: 3, createdAt: Date(timeIntervalSince1970: 0))

    @Test("scan: a monitor's name and id from its TXT record are shown safely; --json keeps them exact")
    func scan() throws {
        let monitor = DiscoveredMonitor(
            monitorId: "id\u{1B}]0;x\u{07}", monitorName: Self.hostile, certFingerprint: Self.fingerprint.hex,
            port: 48080, hosts: ["192.0.2.7"], serviceTypes: ["_baby-monitor._udp"])
        let text = LANScan.line(monitor, paired: false, json: false)
        #expect(!Self.hasHidden(text), "\(text.debugDescription)")
        #expect(text == #"Nurs[2Jerygpj.exe — unpaired — 192.0.2.7:48080 (id id\u{1b}]0;x\u{7})"#)

        let line = LANScan.line(monitor, paired: true, json: true)
        #expect(!line.utf8.contains(0x1B) && !line.utf8.contains(0x07), "\(line.debugDescription)")
        let parsed = try JSONParser().parse(Array(line.utf8))
        #expect(parsed["monitorName"] == .string(Self.hostile))
        #expect(parsed["monitorId"] == .string(monitor.monitorId))
    }

    @Test("pair: the monitor's name in the confirmation is shown safely")
    func pair() {
        let text = PairRequest.paired(Self.record)
        #expect(!Self.hasHidden(text), "\(text.debugDescription)")
        #expect(text.hasPrefix("Paired with \"\(Self.shown)\" ("), "\(text.debugDescription)")
    }

    @Test("monitors list: the table shows the name safely; --json keeps it exact")
    func monitorsList() throws {
        let table = PairedMonitors.table([Self.record], howToPair: MonitorsCommands.howToPair)
        #expect(!Self.hasHidden(table.replacingOccurrences(of: "\n", with: " ")), "\(table.debugDescription)")
        #expect(table.contains("  \(Self.shown)  "), "\(table.debugDescription)")

        let line = PairedMonitors.jsonObject(Self.record).canonicalString
        #expect(!line.utf8.contains(0x1B), "\(line.debugDescription)")
        #expect(try JSONParser().parse(Array(line.utf8))["name"] == .string(Self.hostile))
    }

    @Test("ids and typed text are printed with control and bidirectional characters escaped")
    func printable() {
        #expect(TextTable.printable("abc\u{202E}def\u{2066}") == "abc\\u{202e}def\\u{2066}")
        #expect(TextTable.printable("a\u{9B}2J\u{7F}") == "a\\u{9b}2J\\u{7f}")
    }
}
