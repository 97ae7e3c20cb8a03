import Foundation
import TestSupport
import Testing

/// `Tests/Interop/wire/srtp_wire_check.py`: an independent look at the media packets on the wire (no keys; see the
/// script's docstring for what it concludes from what).
enum SRTPWireCheck {
    static var script: String {
        Fixtures.repositoryRoot.appendingPathComponent("Tests/Interop/wire/srtp_wire_check.py").path
    }

    /// The interop venv's Python if there is one, else the system's: the script needs only the standard library.
    static func python() throws -> String {
        if let python = InteropPeers.python { return python }
        return try Subprocess.resolve("python3")
    }

    /// Starts capturing on `interface` inside `namespace` and waits until the raw socket is bound.
    static func startCapture(
        _ network: MDNSNetwork,
        in namespace: String,
        interface: String,
        excludingPorts ports: [Int]
    ) async throws -> BackgroundProcess {
        let arguments = ["-u", script, "--interface", interface] + ports.flatMap { ["--exclude-port", String($0)] }
        let sniffer = try network.start(namespace, try python(), arguments)
        let capturing = await sniffer.line(timeout: .seconds(10)) { jsonObject($0)?["event"] as? String == "capturing" }
        guard capturing != nil else {
            await sniffer.stop()
            throw MDNSNetwork.SetupError(
                description: "the packet capture did not start: \(sniffer.output) \(sniffer.errorOutput)")
        }
        return sniffer
    }

    /// Stops a capture (SIGTERM) and returns its summary.
    static func finish(_ sniffer: BackgroundProcess) async throws -> [String: Any] {
        await sniffer.stop(grace: .seconds(10))
        return try summary(sniffer.output, sniffer.errorOutput)
    }

    /// Analyses a synthetic capture (`--replay`).
    static func replay(_ capture: SyntheticCapture, excludingPorts ports: [Int] = []) async throws -> [String: Any] {
        let directory = try Subprocess.temporaryDirectory("wire-check")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("capture.json")
        try capture.json().write(to: file)
        let result = try await Subprocess.run(
            try python(),
            [script, "--replay", file.path]
                + ports.flatMap { ["--exclude-port", String($0)] })
        #expect(result.status == 0, "srtp_wire_check.py: \(result.stderrText)")
        return try summary(result.stdoutText.split(separator: "\n").map(String.init), result.stderrText)
    }

    private static func summary(_ lines: [String], _ errors: String) throws -> [String: Any] {
        guard let summary = lines.compactMap(jsonObject).last(where: { $0["event"] as? String == "summary" }) else {
            throw MDNSNetwork.SetupError(description: "srtp_wire_check.py printed no summary: \(lines) \(errors)")
        }
        return summary
    }
}

/// A made-up capture of one WebRTC audio call, in the script's `--replay` format: QUIC on a control port, mDNS,
/// ICE (STUN), optionally a DTLS-SRTP handshake, then Opus RTP at 50 packets/s with RTCP every second, either in
/// the clear or shaped like SRTP/SRTCP (random bytes standing in for ciphertext and tags: no keys are needed to
/// judge the wire).
struct SyntheticCapture {
    static let monitor = "10.78.0.1:41000"
    static let listener = "10.78.0.2:52000"
    static let controlPort = 7000

    var handshake = true
    var encryptedRTP = true
    var encryptedRTCP = true
    var rtpPackets = 250

    private(set) var packets: [(src: String, dst: String, bytes: [UInt8])] = []
    private var random = SplitMix64(seed: 0x5eed_5717)

    init(handshake: Bool = true, encryptedRTP: Bool = true, encryptedRTCP: Bool = true) {
        self.handshake = handshake
        self.encryptedRTP = encryptedRTP
        self.encryptedRTCP = encryptedRTCP
        build()
    }

    func json() throws -> Data {
        let list = packets.map { ["src": $0.src, "dst": $0.dst, "hex": Hex.encode($0.bytes)] }
        return try JSONSerialization.data(withJSONObject: ["packets": list])
    }

    private static func be16(_ value: Int) -> [UInt8] { [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
    private static func be24(_ value: Int) -> [UInt8] { [UInt8(value >> 16 & 0xFF)] + be16(value) }
    private static func be32(_ value: UInt32) -> [UInt8] { be16(Int(value >> 16)) + be16(Int(value & 0xFFFF)) }

    private mutating func send(_ src: String, _ dst: String, _ bytes: [UInt8]) {
        packets.append((src, dst, bytes))
    }

    /// A DTLS 1.2 record (RFC 6347 §4.1).
    private static func record(_ type: UInt8, epoch: Int, sequence: Int, _ fragment: [UInt8]) -> [UInt8] {
        [type, 0xFE, 0xFD] + be16(epoch) + [0, 0] + be32(UInt32(sequence)) + be16(fragment.count) + fragment
    }

    /// A handshake message (RFC 6347 §4.2.2), whole or the fragment `fragment` of it.
    private static func handshakeMessage(
        _ type: UInt8,
        sequence: Int,
        _ body: [UInt8],
        fragment: Range<Int>? = nil
    ) -> [UInt8] {
        let part = fragment ?? 0..<body.count
        return [type] + be24(body.count) + be16(sequence) + be24(part.lowerBound) + be24(part.count) + body[part]
    }

    /// The use_srtp extension (RFC 5764 §4.1.1) with `profiles` and no MKI.
    private static func useSRTP(_ profiles: [Int]) -> [UInt8] {
        let data = be16(2 * profiles.count) + profiles.flatMap(be16) + [0]
        let extensions = be16(14) + be16(data.count) + data
        return be16(extensions.count) + extensions
    }

    private mutating func build() {
        let monitor = Self.monitor
        let listener = Self.listener
        let control = "10.78.0.1:\(Self.controlPort)"
        let controlPeer = "10.78.0.2:48000"
        // QUIC (long and short headers) and mDNS: to be left out by port.
        send(controlPeer, control, [0xC3] + random.bytes(1199))
        send(control, controlPeer, [0x45] + random.bytes(60))
        send("10.78.0.2:5353", "224.0.0.251:5353", [0, 0, 0, 0, 0, 1] + random.bytes(30))
        // ICE connectivity checks (RFC 8489 header: type, length, magic cookie, transaction id).
        let magic: [UInt8] = [0x21, 0x12, 0xA4, 0x42]
        send(listener, monitor, [0x00, 0x01, 0x00, 0x00] + magic + random.bytes(12))
        send(monitor, listener, [0x01, 0x01, 0x00, 0x00] + magic + random.bytes(12))
        if handshake {
            // ClientHello: version, random, empty session id and cookie, one cipher suite, null compression.
            var hello: [UInt8] = [0xFE, 0xFD] + random.bytes(32)
            hello += [0, 0, 0, 2, 0xC0, 0x2B, 1, 0]
            hello += Self.useSRTP([0x0001, 0x0002])
            // In two fragments, two datagrams, as OpenSSL sends a long ClientHello.
            let head = Self.handshakeMessage(1, sequence: 0, hello, fragment: 0..<20)
            send(listener, monitor, Self.record(22, epoch: 0, sequence: 0, head))
            let tail = Self.handshakeMessage(1, sequence: 0, hello, fragment: 20..<hello.count)
            send(listener, monitor, Self.record(22, epoch: 0, sequence: 1, tail))
            // ServerHello: version, random, empty session id, the cipher suite, null compression.
            var reply: [UInt8] = [0xFE, 0xFD] + random.bytes(32)
            reply += [0, 0xC0, 0x2B, 0]
            reply += Self.useSRTP([0x0001])
            let serverHello = Self.handshakeMessage(2, sequence: 0, reply)
            let certificate = Self.handshakeMessage(11, sequence: 1, random.bytes(300))
            send(
                monitor, listener,
                Self.record(22, epoch: 0, sequence: 0, serverHello)
                    + Self.record(22, epoch: 0, sequence: 1, certificate))
            // ChangeCipherSpec, then the encrypted Finished (epoch 1), both ways.
            for (src, dst) in [(listener, monitor), (monitor, listener)] {
                send(
                    src, dst,
                    Self.record(20, epoch: 0, sequence: 2, [1])
                        + Self.record(22, epoch: 1, sequence: 0, random.bytes(64)))
            }
        }
        let ssrc: UInt32 = 0x1234_5678
        let receiverSSRC: UInt32 = 0x0BAD_CAFE
        var index: [UInt32: UInt32] = [:]
        for number in 0..<rtpPackets {
            let header =
                [0x80, UInt8(number == 0 ? 0x80 | 111 : 111)] + Self.be16(1000 + number)
                + Self.be32(UInt32(960 * number)) + Self.be32(ssrc)
            // Plain: an Opus frame whose TOC byte is constant (config 15, hybrid FB 20 ms, mono, code 0).
            let opus = [0x78] + random.bytes(40 + Int(random.next() % 40))
            send(monitor, listener, header + (encryptedRTP ? random.bytes(opus.count + 10) : opus))
            guard number % 50 == 49 else { continue }
            // Once a second, a compound RTCP packet each way: SR + SDES from the sender, RR + SDES from the receiver.
            for (src, dst, source, type) in [(monitor, listener, ssrc, 200), (listener, monitor, receiverSSRC, 201)] {
                let report: [UInt8] =
                    type == 200
                    ? [0x80, 200] + Self.be16(6) + Self.be32(source) + random.bytes(20)
                    : [0x80, 201] + Self.be16(1) + Self.be32(source)
                let cname = Array("synthetic@cribcall".utf8)
                var chunk = Self.be32(source) + [1, UInt8(cname.count)] + cname + [0]
                while chunk.count % 4 != 0 { chunk.append(0) }
                let sdes = [0x81, 202] + Self.be16(chunk.count / 4) + chunk
                let compound = report + sdes
                if encryptedRTCP {
                    index[source, default: 0] += 1
                    // RFC 3711 §3.4: first 8 bytes clear, ciphertext, E||SRTCP index, 80-bit tag.
                    send(
                        src, dst,
                        Array(compound[0..<8]) + random.bytes(compound.count - 8)
                            + Self.be32(0x8000_0000 | index[source]!) + random.bytes(10))
                } else {
                    send(src, dst, compound)
                }
            }
        }
    }
}

/// The wire check has teeth: fed synthetic captures, it tells plain RTP/RTCP from SRTP/SRTCP-shaped traffic.
@Suite(.heavy("srtp_wire_check.py over captured packets"))
struct SRTPWireCheckTests {
    @Test("SRTP-shaped RTP and SRTCP after a DTLS-SRTP handshake are judged encrypted")
    func encryptedCall() async throws {
        let summary = try await SRTPWireCheck.replay(SyntheticCapture(), excludingPorts: [SyntheticCapture.controlPort])
        #expect(summary["encrypted"] as? Bool == true, "\(summary)")
        #expect((summary["failures"] as? [String])?.isEmpty == true, "\(summary)")
        #expect(summary["excludedPackets"] as? Int == 3)
        #expect(summary["mediaFlow"] as? String == "\(SyntheticCapture.monitor) <-> \(SyntheticCapture.listener)")
        #expect(summary["stun"] as? Int == 2)
        #expect(summary["rtp"] as? Int == 250)
        #expect(summary["rtcp"] as? Int == 10)
        #expect(summary["srtcp"] as? Int == 10)
        #expect(summary["srtpProfile"] as? String == "SRTP_AES128_CM_HMAC_SHA1_80")
        #expect(
            summary["srtpProfilesOffered"] as? [String]
                == ["SRTP_AES128_CM_HMAC_SHA1_80", "SRTP_AES128_CM_HMAC_SHA1_32"])
        #expect(summary["dtlsVersionFefdSeen"] as? Bool == true)
        #expect(summary["dtlsSrtpHandshake"] as? Bool == true)
        #expect((summary["rtpDistinctFirstBytes"] as? Int ?? 0) >= 64)
    }

    @Test("plain Opus RTP (constant TOC byte) and plain RTCP are judged NOT encrypted, handshake or not")
    func plainCall() async throws {
        let summary = try await SRTPWireCheck.replay(
            SyntheticCapture(encryptedRTP: false, encryptedRTCP: false),
            excludingPorts: [SyntheticCapture.controlPort])
        #expect(summary["encrypted"] as? Bool == false, "\(summary)")
        // The handshake is there; the payloads and RTCP give the plain stream away.
        #expect(summary["dtlsSrtpHandshake"] as? Bool == true)
        #expect(summary["rtp"] as? Int == 250)
        #expect(summary["rtpDistinctFirstBytes"] as? Int == 1)
        #expect(summary["rtpOpusTocFraction"] as? Double == 1)
        #expect(summary["rtcp"] as? Int == 10)
        #expect(summary["rtcpPlain"] as? Int == 10)
        #expect(summary["srtcp"] as? Int == 0)
        #expect(summary["rtcpAllSrtcpEncrypted"] as? Bool == false)
        let failures = summary["failures"] as? [String] ?? []
        #expect(failures.contains { $0.contains("distinct first payload bytes") }, "\(failures)")
        #expect(failures.contains { $0.contains("not SRTCP") }, "\(failures)")
    }

    @Test("each check alone catches a plain part: plain RTCP beside SRTP, plain RTP beside SRTCP, no handshake")
    func partlyPlainCalls() async throws {
        let plainRTCP = try await SRTPWireCheck.replay(SyntheticCapture(encryptedRTCP: false))
        #expect(plainRTCP["encrypted"] as? Bool == false, "\(plainRTCP)")
        #expect(plainRTCP["rtcpPlain"] as? Int == 10)

        let plainRTP = try await SRTPWireCheck.replay(SyntheticCapture(encryptedRTP: false))
        #expect(plainRTP["encrypted"] as? Bool == false, "\(plainRTP)")
        #expect(plainRTP["srtcp"] as? Int == 10)
        #expect(plainRTP["rtpDistinctFirstBytes"] as? Int == 1)

        let noHandshake = try await SRTPWireCheck.replay(SyntheticCapture(handshake: false))
        #expect(noHandshake["encrypted"] as? Bool == false, "\(noHandshake)")
        #expect(noHandshake["dtlsHandshakeBeforeFirstRtp"] as? Bool == false)
        // Without the control port excluded, QUIC's short-header packet is "other", never RTP.
        #expect(noHandshake["rtp"] as? Int == 250)
    }
}
