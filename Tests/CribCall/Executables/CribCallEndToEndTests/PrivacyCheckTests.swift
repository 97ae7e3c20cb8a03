import Foundation
import TestSupport
import Testing

/// The privacy check has teeth: fed made-up captures (classic pcap files of Ethernet/IPv4/UDP frames, read by
/// tshark like the real ones), each rule fails on what it exists to catch, and a clean LAN session passes.
@Suite(.heavy("privacy_check.py and tshark over synthetic captures"))
struct PrivacyCheckTests {
    static let monitor = "10.78.0.1"
    static let listener = "10.78.0.2"

    /// privacy_check.py's verdict on `frames`; nil (with the reason recorded) when tshark is missing.
    static func verdict(_ frames: SyntheticPcap, minimumMediaFlows: Int = 0) async throws -> [String: Any]? {
        if let reason = PacketCapture.unavailableReason() {
            Issue.record("the privacy check cannot run: \(reason)")
            return nil
        }
        let directory = try Subprocess.temporaryDirectory("privacy-check")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("host.pcapng")
        try frames.data().write(to: file)
        return try await PrivacyCheck.run(
            [file], controlPorts: [SyntheticCapture.controlPort], minimumMediaFlows: minimumMediaFlows
        ).summary
    }

    /// An ICE connectivity check (RFC 8445 §7.1.1): USERNAME, PRIORITY, ICE-CONTROLLING, MESSAGE-INTEGRITY,
    /// FINGERPRINT; or, `ice: false`, a plain Binding request as a client asks a STUN server.
    static func binding(method: UInt16 = 0x0001, ice: Bool) -> [UInt8] {
        func attribute(_ type: UInt16, _ value: [UInt8]) -> [UInt8] {
            var bytes = SyntheticPcap.be16(Int(type)) + SyntheticPcap.be16(value.count) + value
            while bytes.count % 4 != 0 { bytes.append(0) }
            return bytes
        }
        let attributes =
            ice
            ? attribute(0x0006, Array("abcd:efgh".utf8)) + attribute(0x0024, [0x6E, 0, 0x1E, 0xFF])
                + attribute(0x802A, [UInt8](repeating: 7, count: 8))
                + attribute(0x0008, [UInt8](repeating: 9, count: 20))
                + attribute(0x8028, [1, 2, 3, 4])
            : []
        return SyntheticPcap.be16(Int(method)) + SyntheticPcap.be16(attributes.count) + [0x21, 0x12, 0xA4, 0x42]
            + [UInt8](repeating: 0x5A, count: 12) + attributes
    }

    /// A DNS query for `name` (type A).
    static func dnsQuery(_ name: String) -> [UInt8] {
        var bytes: [UInt8] = [0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]
        for label in name.split(separator: ".") { bytes += [UInt8(label.utf8.count)] + Array(label.utf8) }
        return bytes + [0, 0, 1, 0, 1]
    }

    /// A LAN session as it should look: mDNS, ICE checks and their answers, a DTLS-SRTP call, QUIC on its port.
    static func cleanSession() -> SyntheticPcap {
        var pcap = SyntheticPcap()
        pcap.add("\(listener):5353", "224.0.0.251:5353", dnsQuery("_baby-monitor._udp.local"))
        pcap.add("\(listener):52000", "\(monitor):41000", binding(ice: true))
        pcap.add("\(monitor):41000", "\(listener):52000", binding(method: 0x0101, ice: false))
        pcap.add("\(monitor):41000", "\(listener):52000", binding(method: 0x0011, ice: false))
        for packet in callWithoutBareSTUN(SyntheticCapture()) { pcap.add(packet.src, packet.dst, packet.bytes) }
        return pcap
    }

    /// A synthetic call without its STUN stand-ins (bare headers, which this check takes for STUN server queries):
    /// the ICE checks of ``cleanSession()`` are the real shape.
    static func callWithoutBareSTUN(_ call: SyntheticCapture) -> [(src: String, dst: String, bytes: [UInt8])] {
        call.packets.filter { $0.bytes.count < 8 || !$0.bytes[4..<8].elementsEqual([0x21, 0x12, 0xA4, 0x42]) }
    }

    @Test("a LAN session of mDNS, ICE checks and a DTLS-SRTP call passes")
    func cleanSessionPasses() async throws {
        guard let verdict = try await Self.verdict(Self.cleanSession(), minimumMediaFlows: 1) else { return }
        #expect(verdict["ok"] as? Bool == true, "\(verdict)")
        #expect(verdict["encryptedMediaFlows"] as? Int == 1, "\(verdict)")
        let stun = verdict["stun"] as? [String: Int] ?? [:]
        #expect(stun["iceChecks"] == 1 && stun["Binding success response"] == 1, "\(stun)")
        #expect(stun["Binding indication"] == 1, "\(stun)")
        #expect(verdict["stunTypeDisagreementsWithTshark"] as? Int == 0, "\(verdict)")
    }

    @Test(
        "a stream ICE moves to another candidate pair mid-way passes as its association's continuation, unless plain",
        arguments: [true, false])
    func streamMovedToAnotherPair(encryptedAfterTheMove: Bool) async throws {
        var pcap = SyntheticPcap()
        let packets = Self.callWithoutBareSTUN(SyntheticCapture())
        // The same call in the clear (the same structure and SSRCs, packet for packet).
        let plain = Self.callWithoutBareSTUN(SyntheticCapture(encryptedRTP: false, encryptedRTCP: false))
        let moved = "10.78.0.2:52002"
        // The last quarter (about 60 RTP packets: too few to judge alone, and no handshake) on the new pair.
        for (index, packet) in packets.enumerated() {
            let late = index > packets.count * 3 / 4
            pcap.add(
                late && packet.src == SyntheticCapture.listener ? moved : packet.src,
                late && packet.dst == SyntheticCapture.listener ? moved : packet.dst,
                late && !encryptedAfterTheMove ? plain[index].bytes : packet.bytes)
        }
        guard let verdict = try await Self.verdict(pcap, minimumMediaFlows: 2) else { return }
        let media = verdict["media"] as? [[String: Any]] ?? []
        if encryptedAfterTheMove {
            #expect(verdict["ok"] as? Bool == true, "\(verdict)")
            #expect(
                media.last?["continues"] as? String == "\(SyntheticCapture.monitor) <-> \(SyntheticCapture.listener)",
                "\(media)")
        } else {
            let failures = verdict["failures"] as? [String] ?? []
            #expect(verdict["ok"] as? Bool == false, "\(verdict)")
            #expect(
                failures.contains {
                    $0.hasPrefix("media that is not DTLS-SRTP on host/?, 10.78.0.1:41000 <-> \(moved)")
                },
                "\(failures)")
        }
    }

    @Test(
        "each rule fails on what it exists to catch",
        arguments: [
            (
                "a DNS query to a public resolver",
                "leaves the LAN: 10.78.0.2 -> 9.9.9.9 (UDP to port 53, looking up example.org)"
            ),
            ("SSDP to its site-scoped group", "leaves the LAN: 10.78.0.2 -> 239.255.255.250 (UDP to port 1900)"),
            ("a STUN server on the LAN", "a STUN Binding request without ICE credentials (a query to a STUN server)"),
            ("a TURN allocation on the LAN", "TURN: a STUN Allocate request: 10.78.0.2:52001 -> 10.78.0.9:3478"),
            ("plain RTP and RTCP", "media that is not DTLS-SRTP on host/?, 10.78.0.1:41000 <-> 10.78.0.2:52000"),
            ("no media at all", "only 0 DTLS-SRTP media flow(s) seen"),
        ])
    func ruleFails(_ rule: String, _ expected: String) async throws {
        var pcap = SyntheticPcap()
        switch rule {
        case "a DNS query to a public resolver":
            pcap = Self.cleanSession()
            pcap.add("\(Self.listener):40000", "9.9.9.9:53", Self.dnsQuery("example.org"))
        case "SSDP to its site-scoped group":
            pcap = Self.cleanSession()
            pcap.add(
                "\(Self.listener):40001", "239.255.255.250:1900",
                Array("M-SEARCH * HTTP/1.1\r\nHOST: 239.255.255.250:1900\r\nMAN: \"ssdp:discover\"\r\n\r\n".utf8))
        case "a STUN server on the LAN":
            pcap = Self.cleanSession()
            pcap.add("\(Self.listener):52001", "10.78.0.9:3478", Self.binding(ice: false))
        case "a TURN allocation on the LAN":
            pcap = Self.cleanSession()
            pcap.add("\(Self.listener):52001", "10.78.0.9:3478", Self.binding(method: 0x0003, ice: false))
        case "plain RTP and RTCP":
            for packet in Self.callWithoutBareSTUN(SyntheticCapture(encryptedRTP: false, encryptedRTCP: false)) {
                pcap.add(packet.src, packet.dst, packet.bytes)
            }
        default:
            pcap.add("\(Self.listener):5353", "224.0.0.251:5353", Self.dnsQuery("_baby-monitor._udp.local"))
        }
        guard let verdict = try await Self.verdict(pcap, minimumMediaFlows: 1) else { return }
        let failures = verdict["failures"] as? [String] ?? []
        #expect(verdict["ok"] as? Bool == false, "\(rule): \(verdict)")
        #expect(failures.contains { $0.contains(expected) }, "\(rule): \(failures)")
        // Only that: the rest of the session is judged as before.
        let others = failures.filter { !$0.contains(expected) }
        #expect(others.isEmpty || rule == "plain RTP and RTCP", "\(rule): \(others)")
    }
}

/// A classic pcap file (Ethernet) of IPv4/UDP datagrams built by hand.
struct SyntheticPcap {
    private var frames: [[UInt8]] = []

    static func be16(_ value: Int) -> [UInt8] { [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
    private static func le16(_ value: Int) -> [UInt8] { be16(value).reversed() }
    private static func le32(_ value: Int) -> [UInt8] { le16(value & 0xFFFF) + le16(value >> 16 & 0xFFFF) }

    private static func address(_ text: Substring) -> [UInt8] { text.split(separator: ".").map { UInt8($0)! } }

    /// Appends a datagram from `source` to `destination` ("a.b.c.d:port").
    mutating func add(_ source: String, _ destination: String, _ payload: [UInt8]) {
        let (from, to) = (source.split(separator: ":"), destination.split(separator: ":"))
        let udp = Self.be16(Int(from[1])!) + Self.be16(Int(to[1])!) + Self.be16(8 + payload.count) + [0, 0] + payload
        var ip: [UInt8] = [0x45, 0] + Self.be16(20 + udp.count) + [0, 0, 0x40, 0, 64, 17, 0, 0]
        ip += Self.address(from[0]) + Self.address(to[0])
        // The header checksum (RFC 791), so tshark has nothing to complain about.
        var sum = stride(from: 0, to: 20, by: 2).reduce(0) { $0 + (Int(ip[$1]) << 8 | Int(ip[$1 + 1])) }
        while sum > 0xFFFF { sum = (sum & 0xFFFF) + (sum >> 16) }
        ip[10...11] = ArraySlice(Self.be16(~sum & 0xFFFF))
        let ethernet: [UInt8] = [0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00]
        frames.append(ethernet + ip + udp)
    }

    func data() -> Data {
        var bytes: [UInt8] = [0xD4, 0xC3, 0xB2, 0xA1] + Self.le16(2) + Self.le16(4) + Self.le32(0) + Self.le32(0)
        bytes += Self.le32(65_535) + Self.le32(1)
        for (index, frame) in frames.enumerated() {
            bytes +=
                Self.le32(1_764_000_000) + Self.le32(index * 1_000) + Self.le32(frame.count) + Self.le32(frame.count)
            bytes += frame
        }
        return Data(bytes)
    }
}

/// The at-rest check has teeth: a data directory with a stray file, a world-readable key, media and the pairing
/// token in its database, and logs repeating the PIN and a line of the key fail on each; the same directory
/// cleaned up passes.
@Suite(.heavy("at_rest_check.py over a made-up data directory"))
struct AtRestCheckTests {
    static let pin = "482913"
    static let token = "q8Zk3xY_v1-Ab2Cd3Ef4Gg"

    /// at_rest_check.py's verdict on `directory` (allowed: the database and the key) and `log`.
    static func verdict(_ directory: URL, log: String) async throws -> [String: Any] {
        let logFile = directory.deletingLastPathComponent().appendingPathComponent("session.log")
        try log.write(to: logFile, atomically: true, encoding: .utf8)
        let result = try await Subprocess.run(
            try SRTPWireCheck.python(),
            [
                Fixtures.repositoryRoot.appendingPathComponent("Tests/Interop/wire/at_rest_check.py").path,
                "--data-dir", "\(directory.path):cribcall.sqlite,identity.pem", "--log", logFile.path,
                "--secret", "the PIN=\(pin)", "--secret", "the pairing token=\(token)", "--display-event", "pin",
            ])
        return try #require(
            result.stdoutText.split(separator: "\n").last.flatMap { jsonObject(String($0)) },
            "at_rest_check.py: \(result.stderrText)")
    }

    @Test("each rule fails on what it exists to catch, and a clean directory passes")
    func rulesFail() async throws {
        for tool in ["sqlite3", "openssl"] where (try? Subprocess.resolve(tool)) == nil {
            Issue.record("\(tool) is missing: make test installs it")
            return
        }
        let root = try Subprocess.temporaryDirectory("at-rest-check")
        defer { try? FileManager.default.removeItem(at: root) }
        let data = root.appendingPathComponent("data")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        let key = data.appendingPathComponent("identity.pem")
        #expect(
            try await Subprocess.run("openssl", ["genpkey", "-algorithm", "ed25519", "-out", key.path]).status == 0)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: key.path)
        let database = data.appendingPathComponent("cribcall.sqlite").path
        let created = try await Subprocess.run(
            "sqlite3",
            [
                database,
                "CREATE TABLE event (id TEXT, picture BLOB); CREATE TABLE setting (value TEXT);"
                    + "INSERT INTO event VALUES ('e1', X'FFD8FFE000104A46494600010100');"
                    + "INSERT INTO setting VALUES ('{\"pending\": \"\(Self.token)\"}');",
            ])
        #expect(created.status == 0, "\(created.stderrText)")
        try Data("frame".utf8).write(to: data.appendingPathComponent("snapshot.jpg"))
        let pem = try String(contentsOf: key, encoding: .utf8)
        let keyLine = try #require(pem.split(separator: "\n").first { !$0.hasPrefix("-----") })
        let log = [
            #"{"event":"pin","pin":"\#(Self.pin)"}"#, #"{"event":"paired","method":"pin"}"#,
            "debug: the PIN was \(Self.pin)", "loaded key \(keyLine)", #"{"event":"seq","at":17640\#(Self.pin)123}"#,
        ].joined(separator: "\n")

        let dirty = try await Self.verdict(data, log: log)
        let failures = dirty["failures"] as? [String] ?? []
        #expect(dirty["ok"] as? Bool == false, "\(dirty)")
        for expected in [
            "an unexpected file 'snapshot.jpg'", "a private key readable by others (mode 0644",
            "event.picture holds a JPEG/JFIF blob", "a JPEG/JFIF signature", "the pairing token is kept in the file",
            "session.log:3: the PIN in a log line", "session.log:4: a line of a private key (base64) in a log line",
        ] {
            #expect(failures.contains { $0.contains(expected) }, "\(expected): \(failures)")
        }
        // The PIN shown by its own event, and the digits inside a longer number, are not failures.
        #expect(!failures.contains { $0.contains("session.log:1:") || $0.contains("session.log:5:") }, "\(failures)")
        #expect(failures.count == 7, "\(failures)")

        // Cleaned up: the picture and the token gone (VACUUM: not even in free pages), the stray file and the lines
        // removed, the key 0600.
        let cleaned = try await Subprocess.run(
            "sqlite3", [database, "DELETE FROM event; DELETE FROM setting; VACUUM;"])
        #expect(cleaned.status == 0, "\(cleaned.stderrText)")
        try FileManager.default.removeItem(at: data.appendingPathComponent("snapshot.jpg"))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: key.path)
        let clean = try await Self.verdict(
            data,
            log: log.split(separator: "\n").enumerated().filter { ![2, 3].contains($0.offset) }
                .map { String($0.element) }.joined(separator: "\n"))
        #expect(clean["ok"] as? Bool == true, "\(clean)")
        #expect((clean["secretsShownOnlyBy"] as? [String: Int])?["the PIN"] == 1, "\(clean)")
    }
}
