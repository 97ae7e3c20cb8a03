import Foundation
import TestSupport
import Testing

/// CribCall as a parent uses it, across a real LAN: the `cribcall` executable as monitor in one network namespace
/// and as listener in another, each host with its own D-Bus and avahi-daemon, joined by a veth pair (issue 4,
/// item 8). Discovery, pairing (PIN and QR), alerts, a 20 s outage of the link, and revocation — all through the
/// public command line, with real QUIC, real mDNS and python-zeroconf as an independent check of the announcement.
///
/// Each test has a LAN of its own (namespaces with random names), so the two run side by side: they mostly wait
/// (mDNS, a 20 s outage), and the heavy-test gate bounds them.
@Suite(.heavy("two network namespaces with dbus + avahi and cribcall processes"))
struct CribCallEndToEndTests {
    static func canRun(_ test: String) -> Bool {
        MDNSNetwork.available(for: test) && InteropPeers.pythonAvailable(for: test)
    }

    @Test("PIN: discover, pair with the PIN the monitor shows, alerts, 20 s outage replayed exactly once, revoke")
    func pinPairing() async throws {
        guard Self.canRun("pinPairing") else { return }
        try await MDNSNetwork.with(avahiIn: ["a", "b"]) { network in
            let lan = try TwoHouseholdDevices(network)
            defer { lan.removeData() }
            let (monitor, ready) = try await lan.startMonitor(["--name", "Nursery"])
            defer { Task { await monitor.stop() } }

            // An mDNS stack nobody here wrote sees the announcement, with the §10 TXT record.
            try await lan.expectZeroconfSees(ready)

            // The listener finds the monitor, not yet paired.
            let scan = try await network.run(
                network.b, lan.cribcall, ["scan", "--json", "--seconds", "4"] + lan.listenerData
            )
            let found = scan.stdoutText.split(separator: "\n").compactMap { jsonObject(String($0)) }
            let entry = try #require(
                found.first { $0["monitorId"] as? String == ready.monitorId },
                "scan: \(scan.stdoutText) \(scan.stderrText)")
            #expect(entry["monitorName"] as? String == "Nursery")
            #expect(entry["certFingerprint"] as? String == ready.fingerprint)
            #expect(entry["paired"] as? Bool == false)
            #expect((entry["hosts"] as? [String])?.contains(MDNSNetwork.addressA) == true)

            // PIN pairing by name, the PIN typed from what the monitor shows (its JSON).
            let pair = try network.start(
                network.b, lan.cribcall,
                ["pair", "--pin", "--monitor", "Nursery", "--name", "Dad's laptop"]
                    + lan.listenerData, acceptsInput: true)
            defer { Task { await pair.stop() } }
            let pinLine = await monitor.line(timeout: .seconds(20)) { lan.event($0) == "pin" }
            let pin = try #require(
                pinLine.flatMap(jsonObject)?["pin"] as? String,
                "monitor: \(monitor.output) \(monitor.errorOutput); pair: \(pair.errorOutput)")
            pair.send(pin + "\n")
            #expect(await pair.waitForExit(timeout: .seconds(20)) == 0, "pair: \(pair.output) \(pair.errorOutput)")
            let paired = try #require(await monitor.line { lan.event($0) == "paired" }.flatMap(jsonObject))
            #expect(paired["method"] as? String == "pin")
            #expect(paired["listenerName"] as? String == "Dad's laptop")

            // Scanning again shows it paired.
            let rescan = try await network.run(
                network.b, lan.cribcall, ["scan", "--json", "--seconds", "3"] + lan.listenerData
            )
            #expect(
                rescan.stdoutText.split(separator: "\n").compactMap { jsonObject(String($0)) }
                    .contains { $0["monitorId"] as? String == ready.monitorId && $0["paired"] as? Bool == true },
                "scan: \(rescan.stdoutText)")

            try await lan.alertsSurviveOutageThenRevoke(
                monitor: monitor, listenerId: try #require(paired["listenerId"] as? String)
            )
        }
    }

    @Test("QR: pair with the code's token (monitor found on the LAN), a replayed code is refused, outage, revoke")
    func qrPairing() async throws {
        guard Self.canRun("qrPairing") else { return }
        try await MDNSNetwork.with(avahiIn: ["a", "b"]) { network in
            let lan = try TwoHouseholdDevices(network)
            defer { lan.removeData() }
            let (monitor, ready) = try await lan.startMonitor(["--name", "Guest Room", "--qr"])
            defer { Task { await monitor.stop() } }
            let qrLine = await monitor.line { lan.event($0) == "qr" }
            let qrText = try #require(qrLine.flatMap(jsonObject)?["text"] as? String, "monitor: \(monitor.output)")

            // No address given: the listener finds the monitor by the id in the code.
            let pair = try await network.run(
                network.b, lan.cribcall,
                ["pair", "--qr", qrText, "--name", "Mum's laptop"]
                    + lan.listenerData)
            #expect(pair.status == 0, "pair: \(pair.stdoutText) \(pair.stderrText)")
            let paired = try #require(await monitor.line { lan.event($0) == "paired" }.flatMap(jsonObject))
            #expect(paired["method"] as? String == "qr")
            #expect(paired["listenerName"] as? String == "Mum's laptop")
            let listed = try await network.run(
                network.b, lan.cribcall, ["monitors", "list", "--json"] + lan.listenerData
            )
            let stored = try #require(jsonObject(listed.stdoutText.split(separator: "\n").first.map(String.init) ?? ""))
            #expect(stored["monitorId"] as? String == ready.monitorId)
            // Whichever of the monitor's addresses mDNS resolved first: its IPv4 one or its IPv6 link-local one
            // (scoped to the listener's interface).
            let host = stored["host"] as? String ?? ""
            #expect(
                host == MDNSNetwork.addressA || (host.hasPrefix("fe80:") && host.hasSuffix("%\(network.b)")),
                "stored address \(host)")

            // Someone who photographed the code later cannot use it: the token is spent.
            let intruderData = try Subprocess.temporaryDirectory("e2e-intruder")
            defer { try? FileManager.default.removeItem(at: intruderData) }
            let replay = try await network.run(
                network.b, lan.cribcall,
                [
                    "pair", "--qr", qrText, "--name", "Intruder",
                    "--data-dir", intruderData.path,
                ])
            #expect(replay.status != 0, "a replayed QR code was accepted: \(replay.stdoutText)")
            #expect(await monitor.line(timeout: .seconds(5)) { lan.event($0) == "pairing_failed" } != nil)

            try await lan.alertsSurviveOutageThenRevoke(
                monitor: monitor, listenerId: try #require(paired["listenerId"] as? String)
            )
        }
    }
}

/// Live audio across the two hosts (issue 5): WebRTC between the namespaces, negotiated over QUIC; a packet
/// capture on the listener's host checks that the media on the wire is DTLS-SRTP, never plain RTP.
@Suite(.serialized, .heavy("two network namespaces, a live stream and a packet capture"))
struct CribCallLiveStreamEndToEndTests {
    @Test("the listener opens a live stream across the LAN and records the monitor's audio")
    func liveAudio() async throws {
        guard MDNSNetwork.available(for: "liveAudio") else { return }
        try await MDNSNetwork.with(busIn: [], avahiIn: []) { network in
            let lan = try TwoHouseholdDevices(network)
            defer { lan.removeData() }
            // The nursery's "microphone": a steady 523 Hz tone (a file looped in real time), so every second of
            // the stream has sound; detection and the stream share it.
            let tone = lan.monitorDirectory.appendingPathComponent("nursery.wav")
            try WAVLevel.writeTone(frequency: 523, amplitude: 0.4, seconds: 1, to: tone)
            let (monitor, ready) = try await lan.startMonitor(
                [
                    "--name", "Nursery", "--no-discovery", "--ice-address", MDNSNetwork.addressA,
                ], audioSource: "file:\(tone.path)")
            defer { Task { await monitor.stop() } }
            let pair = try network.start(
                network.b, lan.cribcall,
                [
                    "pair", "--pin", "--address", "\(MDNSNetwork.addressA):\(ready.port)", "--fingerprint",
                    ready.fingerprint,
                    "--monitor-name", "Nursery", "--name", "Dad's laptop",
                ] + lan.listenerData, acceptsInput: true)
            defer { Task { await pair.stop() } }
            let pin = try #require(
                await monitor.line { lan.event($0) == "pin" }.flatMap(jsonObject)?["pin"] as? String,
                "monitor: \(monitor.output) \(monitor.errorOutput)")
            pair.send(pin + "\n")
            #expect(await pair.waitForExit(timeout: .seconds(20)) == 0, "pair: \(pair.output) \(pair.errorOutput)")

            // An independent packet capture on the listener's side of the link, the QUIC control channel left out.
            let sniffer = try await SRTPWireCheck.startCapture(
                network, in: network.b, interface: network.b,
                excludingPorts: [ready.port])
            defer { Task { await sniffer.stop() } }

            let recording = lan.listenerDirectory.appendingPathComponent("nursery.wav")
            let listener = try network.start(
                network.b, lan.cribcall,
                [
                    "listen", "--json", "--no-notify", "--open", "Nursery", "--record", recording.path,
                    "--ice-address", MDNSNetwork.addressB,
                ] + lan.listenerData)
            defer { Task { await listener.stop() } }
            let started = await listener.line(timeout: .seconds(20)) { lan.event($0) == "stream_started" }
            #expect(started != nil, "listen: \(listener.output) \(listener.errorOutput); monitor: \(monitor.output)")
            #expect(await monitor.line { lan.event($0) == "stream_started" } != nil)
            let announced = await listener.line { lan.event($0) == "recording" }.flatMap(jsonObject)
            #expect(announced?["file"] as? String == recording.path, "listen: \(listener.output)")
            // 6 s: about 300 RTP packets of 20 ms, comfortably over the 200 the wire check needs to judge payloads.
            try await Task.sleep(for: .seconds(6))
            await listener.stop(grace: .seconds(5))  // SIGTERM: the recording is finished properly

            let level = try WAVLevel(contentsOf: recording)
            #expect(level.sampleRate == 48_000 && level.channels == 1)
            #expect(level.seconds >= 2, "only \(level.seconds) s recorded")
            #expect(level.rms > 0.15, "the recording is too quiet for the 0.28 RMS tone (RMS \(level.rms))")
            #expect(abs(level.frequency - 523) < 25, "the recording is not the nursery's tone: \(level.frequency) Hz")

            // On the wire: DTLS-SRTP, no plain RTP (issue 5; criteria in Tests/Interop/wire/srtp_wire_check.py).
            let wire = try await SRTPWireCheck.finish(sniffer)
            #expect(wire["encrypted"] as? Bool == true, "wire check: \(wire)")
            #expect(wire["dtlsHandshakeBeforeFirstRtp"] as? Bool == true, "wire check: \(wire)")
            #expect(wire["dtlsSrtpHandshake"] as? Bool == true, "wire check: \(wire)")
            #expect(wire["dtlsVersionFefdSeen"] as? Bool == true, "wire check: \(wire)")
            // SRTP_AES128_CM_… or SRTP_AEAD_…: a profile that encrypts (not SRTP_NULL_…).
            #expect((wire["srtpProfile"] as? String)?.hasPrefix("SRTP_AE") == true, "wire check: \(wire)")
            #expect((wire["rtp"] as? Int ?? 0) >= 200, "wire check: \(wire)")
            let rtcp = wire["rtcp"] as? Int ?? -1
            #expect(
                rtcp >= 1 && wire["srtcp"] as? Int == rtcp && wire["rtcpAllSrtcpEncrypted"] as? Bool == true,
                "every RTCP packet must be SRTCP with E set: \(wire)")
            #expect((wire["rtpDistinctFirstBytes"] as? Int ?? 0) >= 64, "wire check: \(wire)")
            #expect((wire["rtpOpusTocFraction"] as? Double ?? 1) < 0.5, "wire check: \(wire)")
            #expect(wire["rtpAuthTagRoom"] as? Bool == true, "wire check: \(wire)")
        }
    }
}

/// Duration and level of a 16-bit PCM WAV file.
struct WAVLevel {
    var sampleRate: Int
    var channels: Int
    var seconds: Double
    var rms: Double
    /// The dominant frequency, from zero crossings (meaningful for a tone).
    var frequency: Double

    init(contentsOf url: URL) throws {
        let bytes = [UInt8](try Data(contentsOf: url))
        func u32(_ at: Int) -> Int {
            Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24
        }
        func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        guard bytes.count > 44, bytes[0..<4].elementsEqual("RIFF".utf8) else {
            throw MDNSNetwork.SetupError(description: "\(url.path) is not a WAV file")
        }
        // Walk the chunks: "fmt " gives the format, "data" the samples.
        var offset = 12
        var format: (rate: Int, channels: Int) = (0, 0)
        var samples: ArraySlice<UInt8> = []
        while offset + 8 <= bytes.count {
            let size = u32(offset + 4)
            let body = offset + 8
            if bytes[offset..<offset + 4].elementsEqual("fmt ".utf8) { format = (u32(body + 4), u16(body + 2)) }
            if bytes[offset..<offset + 4].elementsEqual("data".utf8) {
                samples = bytes[body..<min(bytes.count, body + size)]
            }
            offset = body + size + (size & 1)
        }
        sampleRate = format.rate
        channels = format.channels
        let count = samples.count / 2
        seconds = format.rate > 0 ? Double(count) / Double(format.rate * max(1, format.channels)) : 0
        var sum = 0.0
        var index = samples.startIndex
        while index + 1 < samples.endIndex {
            let value = Double(Int16(bitPattern: UInt16(samples[index]) | UInt16(samples[index + 1]) << 8)) / 32768
            sum += value * value
            index += 2
        }
        rms = count > 0 ? (sum / Double(count)).squareRoot() : 0
        var crossings = 0
        var previous = 0.0
        index = samples.startIndex
        while index + 1 < samples.endIndex {
            let value = Double(Int16(bitPattern: UInt16(samples[index]) | UInt16(samples[index + 1]) << 8))
            if (previous < 0) != (value < 0) { crossings += 1 }
            previous = value
            index += 2
        }
        frequency = seconds > 0 ? Double(crossings) / 2 / seconds : 0
    }

    /// Writes a mono 48 kHz 16-bit WAV of a sine tone (whole cycles in `seconds` loop without a click).
    static func writeTone(frequency: Double, amplitude: Double, seconds: Double, to url: URL) throws {
        let count = Int(seconds * 48_000)
        var data = Data()
        func append<T: FixedWidthInteger>(_ value: T) {
            withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) }
        }
        data.append(contentsOf: Array("RIFF".utf8))
        append(UInt32(36 + 2 * count))
        data.append(contentsOf: Array("WAVEfmt ".utf8))
        append(UInt32(16))
        append(UInt16(1))
        append(UInt16(1))
        append(UInt32(48_000))
        append(UInt32(96_000))
        append(UInt16(2))
        append(UInt16(16))
        data.append(contentsOf: Array("data".utf8))
        append(UInt32(2 * count))
        for index in 0..<count {
            append(Int16((amplitude * sin(2 * Double.pi * frequency * Double(index) / 48_000) * 32_767).rounded()))
        }
        try data.write(to: url)
    }
}

/// The two hosts of a test: the monitor's data in namespace A, the listener's in namespace B.
struct TwoHouseholdDevices {
    let network: MDNSNetwork
    var cribcall: String
    let monitorDirectory: URL
    let listenerDirectory: URL

    struct Ready {
        var monitorId: String
        var fingerprint: String
        var port: Int
    }

    init(_ network: MDNSNetwork) throws {
        self.network = network
        cribcall = try Subprocess.builtProduct("cribcall")
        monitorDirectory = try Subprocess.temporaryDirectory("e2e-monitor")
        listenerDirectory = try Subprocess.temporaryDirectory("e2e-listener")
    }

    /// Deletes both data directories (at the end of a test).
    func removeData() {
        for directory in [monitorDirectory, listenerDirectory] { try? FileManager.default.removeItem(at: directory) }
    }

    var monitorData: [String] { ["--data-dir", monitorDirectory.path] }
    var listenerData: [String] { ["--data-dir", listenerDirectory.path] }

    func event(_ line: String) -> String? {
        jsonObject(line)?["event"] as? String
    }

    /// Starts `cribcall monitor --json` with the cry test source in namespace A and waits for `ready`.
    func startMonitor(_ arguments: [String], audioSource: String = "test:cry") async throws -> (
        BackgroundProcess, Ready
    ) {
        let monitor = try network.start(
            network.a, cribcall,
            ["monitor", "--json", "--audio-source", audioSource] + arguments + monitorData)
        let line = try? await monitor.ready("cribcall monitor") { event($0) == "ready" }
        guard let ready = line.flatMap(jsonObject), let id = ready["monitorId"] as? String,
            let fingerprint = ready["certFingerprint"] as? String, let port = ready["port"] as? Int
        else {
            await monitor.stop()
            throw MDNSNetwork.SetupError(
                description: "the monitor did not start: \(monitor.output) \(monitor.errorOutput)")
        }
        return (monitor, Ready(monitorId: id, fingerprint: fingerprint, port: port))
    }

    /// python-zeroconf, in the listener's namespace, sees the monitor under both service types with its TXT record.
    func expectZeroconfSees(_ ready: Ready) async throws {
        let browser = try network.zeroconfPeer(
            network.b,
            [
                "browse", "--type", "_baby-monitor._udp.local.", "--type", "_baby-monitor._tcp.local.", "--seconds",
                "15",
            ])
        defer { Task { await browser.stop() } }
        try await browser.ready("zeroconf_peer.py browse") { jsonObject($0)?["event"] as? String == "ready" }
        for serviceType in ["_baby-monitor._udp.local.", "_baby-monitor._tcp.local."] {
            let line = await browser.line { line in
                let object = jsonObject(line)
                return object?["event"] as? String == "add" && object?["type"] as? String == serviceType
            }
            let added = try #require(line.flatMap(jsonObject), "zeroconf: \(browser.output) \(browser.errorOutput)")
            #expect(added["port"] as? Int == ready.port)
            #expect((added["addresses"] as? [String])?.contains(MDNSNetwork.addressA) == true)
            let txt = try #require(added["txt"] as? [String: String])
            #expect(txt["monitorId"] == ready.monitorId)
            #expect(txt["monitorCertFingerprint"] == ready.fingerprint)
            #expect(txt["version"] == "1")
            #expect(txt["servicePort"] == String(ready.port))
        }
    }

    /// The monitor's noise events so far, by seq.
    func monitorSeqs(_ monitor: BackgroundProcess) -> [Int] {
        monitor.output.compactMap(jsonObject).filter { $0["event"] as? String == "noise" }.compactMap {
            $0["seq"] as? Int
        }
    }

    /// The listener's noise events so far: (seq, replayed).
    func listenerNoise(_ listener: BackgroundProcess) -> [(seq: Int, replayed: Bool)] {
        listener.output.compactMap(jsonObject).filter { $0["event"] as? String == "noise" }.compactMap { object in
            (object["seq"] as? Int).map { ($0, object["replayed"] as? Bool ?? false) }
        }
    }

    /// `cribcall listen` in namespace B: a live alert arrives; the link goes down for 20 s; link_lost is raised;
    /// after the link is back the alerts of the outage are replayed, none missing or duplicated; then revoking the
    /// listener on the monitor makes it report `unauthorized` and stop.
    func alertsSurviveOutageThenRevoke(monitor: BackgroundProcess, listenerId: String) async throws {
        let listener = try network.start(network.b, cribcall, ["listen", "--json"] + listenerData)
        defer { Task { await listener.stop() } }
        #expect(
            await listener.line(timeout: .seconds(15)) { event($0) == "connected" } != nil,
            "listen: \(listener.output) \(listener.errorOutput)")
        // test:cry cries every 10 s: a live alert within 25 s.
        let live = await listener.line(timeout: .seconds(25)) { line in
            event(line) == "noise" && jsonObject(line)?["replayed"] as? Bool == false
        }
        #expect(live != nil, "no live alert: \(listener.output) \(listener.errorOutput); monitor: \(monitor.output)")

        // The link goes down for 20 s.
        let seqsBefore = Set(monitorSeqs(monitor))
        try await network.setLink(up: false)
        let down = ContinuousClock.now
        let lost = await listener.line(timeout: .seconds(19)) { event($0) == "link_lost" }
        #expect(lost != nil, "no link_lost during the outage: \(listener.output)")
        try await Task.sleep(until: down + .seconds(20))
        try await network.setLink(up: true)
        let during = Set(monitorSeqs(monitor)).subtracting(seqsBefore)
        #expect(!during.isEmpty, "the monitor detected nothing during the outage: \(monitor.output)")
        #expect(
            await listener.line(timeout: .seconds(40)) { event($0) == "link_restored" } != nil,
            "the link did not come back: \(listener.output) \(listener.errorOutput)")

        // Every alert of the outage arrives (replayed), each exactly once.
        let target = monitorSeqs(monitor).max() ?? 0
        let deadline = ContinuousClock.now + .seconds(20)
        while (listenerNoise(listener).map(\.seq).max() ?? 0) < target, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        let received = listenerNoise(listener)
        let seqs = received.map(\.seq)
        #expect(Set(seqs).count == seqs.count, "duplicated alerts: \(seqs)")
        let first = try #require(seqs.min())
        let expected = monitorSeqs(monitor).filter { $0 >= first && $0 <= target }
        #expect(seqs.filter { $0 <= target }.sorted() == expected.sorted(), "listener \(seqs), monitor \(expected)")
        for seq in during.sorted() {
            #expect(received.first { $0.seq == seq }?.replayed == true, "alert #\(seq) of the outage was not replayed")
        }

        // Revoked on the monitor (another terminal, same data directory): the listener is told and stops.
        let revoke = try await Subprocess.run(cribcall, ["listeners", "revoke", listenerId] + monitorData)
        #expect(revoke.status == 0, "revoke: \(revoke.stderrText)")
        let unauthorized = await listener.line(timeout: .seconds(5)) { event($0) == "unauthorized" }
        #expect(unauthorized != nil, "listen: \(listener.output) \(listener.errorOutput)")
        #expect(await listener.waitForExit(timeout: .seconds(10)) != nil, "the listener kept running after revocation")
        let revoked = await monitor.line(timeout: .seconds(5)) { event($0) == "listener_revoked" }
        #expect(revoked.flatMap(jsonObject)?["listenerId"] as? String == listenerId, "monitor: \(monitor.output)")
    }
}
