import Foundation
import TestSupport
import Testing

/// Privacy proven on the wire (issue 19; seed 000's LAN-only promise, seed 003 §10.2's privacy audit): a whole
/// CribCall + CribAlert session between two hosts of a LAN, captured by Wireshark's dumpcap on every interface of
/// every host (and of the router, when there is one), judged by `Tests/Interop/wire/privacy_check.py` through
/// tshark's dissectors; what the session left on disk and in its logs judged by `at_rest_check.py`.
///
/// The session: the monitor (namespace A, a camera and a microphone, CribAlert on) is found by mDNS, a listener
/// (namespace B) pairs by the PIN it shows, listens with a live audio+video stream recorded (`--record`), gets a
/// noise alert and a safety alert; the apps for parents open in headless Chromium — the monitor's (its alerts
/// marked okay, its live view) and the listener's (playing the monitor live across the LAN); then the monitor
/// revokes the listener. Run twice: with a router that is both hosts' default route (anything sent beyond the LAN
/// would cross it and be captured), and offline, with no router and no default route at all.
@Suite(.serialized, .heavy(cores: 1, "network namespaces, packet captures, a monitor, listeners and Chromium"))
struct PrivacyCaptureTests {
    enum Uplink: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case router
        case offline
        var testDescription: String { self == .router ? "with a router to the internet" : "offline (no route)" }
    }

    /// Python: a STUN Binding request to ARGV[1]:3478 every 0.5 s until a success response comes (exit 0), at most
    /// 2 minutes (exit 1).
    static let stunProbe = """
        import os, socket, sys, time
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(0.5)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            s.sendto(bytes([0, 1, 0, 0, 0x21, 0x12, 0xA4, 0x42]) + os.urandom(12), (sys.argv[1], 3478))
            try:
                if s.recv(2048)[:2] == bytes([1, 1]): sys.exit(0)
            except OSError:
                time.sleep(0.5)
        sys.exit(1)
        """

    static func canRun(_ test: String) -> Bool {
        guard CribCallEndToEndTests.canRun(test) else { return false }
        if let reason = PacketCapture.unavailableReason() {
            Issue.record("\(test) cannot capture: \(reason)")
            return false
        }
        for path in ["/usr/bin/chromium", "/usr/bin/chromedriver"]
        where !FileManager.default.isExecutableFile(atPath: path) {
            Issue.record("\(path) is missing: apt-get install chromium chromium-driver (make test installs them)")
            return false
        }
        return true
    }

    @Test("a whole session sends nothing beyond the LAN and leaves only what was asked for", arguments: Uplink.allCases)
    func wholeSession(uplink: Uplink) async throws {
        guard Self.canRun("privacy capture (\(uplink.rawValue))") else { return }
        try await MDNSNetwork.with(avahiIn: ["a", "b"], withRouter: uplink == .router) { network in
            var session = try PrivacySession(network, name: "privacy-\(uplink.rawValue)")
            defer { session.removeData() }
            try await session.run()
        }
    }

    @Test("the capture check fails when a listener is given a STUN server on the internet")
    func stunServerConfigured() async throws {
        guard Self.canRun("privacy capture (STUN server)"), let python = InteropPeers.python else { return }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/turnserver") else {
            Issue.record("coturn is not installed: apt-get install coturn (the STUN server of this test)")
            return
        }
        try await MDNSNetwork.with(busIn: [], avahiIn: [], withRouter: true) { network in
            let lan = try TwoHouseholdDevices(network)
            defer { lan.removeData() }
            let artifacts = try Fixtures.testArtifacts("privacy-stun")
            let router = try #require(network.r)
            // A STUN server on the internet: coturn, STUN only, on the address beyond the router.
            let stun = try BackgroundProcess(
                "ip",
                [
                    "netns", "exec", router, "/usr/bin/turnserver", "-n", "--stun-only", "--no-cli", "--no-tls",
                    "--no-dtls", "--listening-ip", MDNSNetwork.internetAddress, "--listening-port", "3478",
                    "--pidfile", artifacts.appendingPathComponent("turnserver.pid").path, "--log-file", "stdout",
                ])
            defer { Task { await stun.stop() } }
            // Answering before anything is captured (the listener's query must find it up; this one is not the
            // session's).
            let probe = try await Subprocess.run(
                "ip", ["netns", "exec", router, python, "-c", Self.stunProbe, MDNSNetwork.internetAddress])
            #expect(probe.status == 0, "coturn did not answer: \(probe.stderrText) \(stun.output.suffix(10))")
            let captures = try await PrivacySession.capture(network, into: artifacts)
            let (monitor, ready) = try await lan.startMonitor(
                ["--name", "Nursery", "--no-discovery", "--qr"], audioSource: "test:cry")
            defer { Task { await monitor.stop() } }
            let qr = try #require(
                await monitor.line { lan.event($0) == "qr" }.flatMap(jsonObject)?["text"] as? String,
                "monitor: \(monitor.output)")
            let script = Fixtures.repositoryRoot.appendingPathComponent("Tests/Interop/webrtc/stream_client.py").path
            let client = try network.start(
                network.b, python,
                [
                    "-u", script, "--host", MDNSNetwork.addressA, "--port", String(ready.port), "--qr", qr,
                    "--ice-address", MDNSNetwork.addressB, "--stun", "stun:\(MDNSNetwork.internetAddress):3478",
                    "--seconds", "4", "--timeout", "90",
                ])
            defer { Task { await client.stop() } }
            let status = await client.waitForExit(timeout: .seconds(120))
            // A failure carries both ends: a stream that connected but carried nothing (seen once under stress:
            // DTLS done, no SRTP from the monitor for 90 s) is told apart from one that never connected.
            #expect(
                status == 0,
                "stream_client.py: \(client.output) \(client.errorOutput.suffix(2000)) monitor: \(monitor.output.suffix(60))"
            )
            await monitor.stop(grace: .seconds(10))
            for capture in captures { await capture.finish() }

            let (checkStatus, summary) = try await PrivacyCheck.run(
                captures.map(\.file), controlPorts: [ready.port], minimumMediaFlows: 1)
            let failures = summary["failures"] as? [String] ?? []
            #expect(checkStatus == 1 && summary["ok"] as? Bool == false, "\(summary)")
            #expect(
                failures.contains {
                    $0.contains("a STUN Binding request without ICE credentials")
                        && $0.contains("\(MDNSNetwork.addressB):") && $0.contains(MDNSNetwork.internetAddress)
                }, "\(failures)")
            #expect(
                failures.contains {
                    $0.hasPrefix("leaves the LAN: \(MDNSNetwork.addressB) -> \(MDNSNetwork.internetAddress)")
                }, "\(failures)")
            // Everything else of that session holds: the stream itself was DTLS-SRTP on the LAN.
            #expect((summary["encryptedMediaFlows"] as? Int ?? 0) >= 1, "\(summary)")
            #expect(
                failures.allSatisfy { $0.contains(MDNSNetwork.internetAddress) }, "only the STUN server: \(failures)")
        }
    }
}

/// Runs `Tests/Interop/wire/privacy_check.py` over capture files.
enum PrivacyCheck {
    static func run(
        _ captures: [URL], controlPorts: [Int], minimumMediaFlows: Int
    ) async throws -> (status: Int32, summary: [String: Any]) {
        let script = Fixtures.repositoryRoot.appendingPathComponent("Tests/Interop/wire/privacy_check.py").path
        let result = try await Subprocess.run(
            try SRTPWireCheck.python(),
            [script, "--lan", MDNSNetwork.subnet, "--min-media-flows", String(minimumMediaFlows)]
                + controlPorts.flatMap { ["--control-port", String($0)] } + captures.map(\.path))
        let summary = try #require(
            result.stdoutText.split(separator: "\n").last.flatMap { jsonObject(String($0)) },
            "privacy_check.py printed nothing: \(result.stderrText)")
        #expect(result.status == 0 || result.status == 1, "privacy_check.py: \(summary) \(result.stderrText)")
        return (result.status, summary)
    }
}

/// One whole session of the privacy capture, on `network`, with its captures and logs kept in
/// `.build/test-artifacts/NAME/` (pass or fail, for a look with Wireshark).
struct PrivacySession {
    let network: MDNSNetwork
    let lan: TwoHouseholdDevices
    let artifacts: URL
    let inputs: URL
    /// Every process's output: (name, stdout and stderr), written to `artifacts/logs/` for at_rest_check.py.
    private var logs: [(String, String)] = []

    init(_ network: MDNSNetwork, name: String) throws {
        self.network = network
        lan = try TwoHouseholdDevices(network)
        artifacts = try Fixtures.testArtifacts(name)
        inputs = try Subprocess.temporaryDirectory("privacy-inputs")
    }

    /// Starts dumpcap on every interface of every namespace of `network`: monitor.pcapng, listener.pcapng and
    /// (with a router) router.pcapng in `directory`.
    static func capture(_ network: MDNSNetwork, into directory: URL) async throws -> [PacketCapture] {
        var captures: [PacketCapture] = []
        for namespace in network.namespaces {
            let label = namespace == network.a ? "monitor" : namespace == network.b ? "listener" : "router"
            captures.append(try await PacketCapture.start(in: namespace, label: label, directory: directory))
        }
        return captures
    }

    func removeData() {
        lan.removeData()
        try? FileManager.default.removeItem(at: inputs)
    }

    private mutating func keep(_ name: String, _ process: BackgroundProcess) {
        logs.append((name, (process.output + [process.errorOutput]).joined(separator: "\n")))
    }

    private mutating func keep(_ name: String, _ result: Subprocess.Result) {
        logs.append((name, result.stdoutText + "\n" + result.stderrText))
    }

    /// The nursery's microphone: 10 s looped, 7 s of a quiet tone then 3 s loud (a noise alert every loop).
    private func microphone() throws -> URL {
        let file = inputs.appendingPathComponent("nursery.wav")
        let quiet = WAVFile.tone(frequency: 440, amplitude: 0.01, seconds: 7, sampleRate: 48_000, channels: 1)
        let loud = WAVFile.tone(frequency: 440, amplitude: 0.5, seconds: 3, sampleRate: 48_000, channels: 1)
        try WAVFile.write(quiet + loud, channels: 1, sampleRate: 48_000, to: file)
        return file
    }

    /// The app's secret: the path component after `/s/` of its address.
    static func secret(of url: String) -> String {
        url.components(separatedBy: "/s/").last?.split(separator: "/").first.map(String.init) ?? url
    }

    /// privacy_browser.py in `namespace` with `arguments` (which app, its address); it must pass.
    private func browse(in namespace: String, _ arguments: String...) async throws {
        let script = Fixtures.repositoryRoot.appendingPathComponent("Tests/Interop/cribalert/privacy_browser.py")
        let which = arguments.first?.dropFirst(2).prefix { $0 != "-" } ?? "app"
        let browser = try network.start(
            namespace, try SRTPWireCheck.python(),
            [script.path] + arguments + [
                "--artifacts", artifacts.appendingPathComponent("browser-\(which)").path, "--timeout", "150",
            ])
        defer { Task { await browser.stop() } }
        let status = await browser.waitForExit(timeout: .seconds(300))
        let result = browser.output.last { $0.hasPrefix("{") && $0.contains("\"ok\"") }.flatMap(jsonObject) ?? [:]
        #expect(
            status == 0 && result["ok"] as? Bool == true,
            "privacy_browser.py \(which): \(browser.output.joined(separator: "\n"))\n\(browser.errorOutput.suffix(3000))"
        )
        print(
            "Privacy capture, the \(which)'s app: \(result["monitor_live_view"] ?? result["live_view"] ?? result["video"] ?? "?")"
        )
    }

    mutating func run() async throws {
        let network = network
        let lan = lan
        let captures = try await Self.capture(network, into: artifacts)

        // The nursery: camera (test pattern), microphone, CribAlert, a pairing QR code shown at start.
        let (monitor, ready) = try await lan.startMonitor(
            ["--name", "Nursery", "--safety", "--video-source", "test", "--qr", "--web", "0"],
            audioSource: "file:\(try microphone().path)")
        defer { Task { await monitor.stop() } }
        let monitorApp = try #require(
            await monitor.line(timeout: .seconds(60)) { lan.event($0) == "web" }.flatMap(jsonObject)?["url"]
                as? String, "monitor: \(monitor.output) \(monitor.errorOutput)")
        let qrText = try #require(
            await monitor.line { lan.event($0) == "qr" }.flatMap(jsonObject)?["text"] as? String,
            "monitor: \(monitor.output)")
        let token = try #require(jsonObject(qrText)?["pairingToken"] as? String, "QR: \(qrText)")

        // Found by mDNS (by name), paired by the PIN the monitor shows.
        let pair = try network.start(
            network.b, lan.cribcall, ["pair", "--pin", "--monitor", "Nursery", "--name", "Mum"] + lan.listenerData,
            acceptsInput: true)
        let pin = try #require(
            await monitor.line(timeout: .seconds(30)) { lan.event($0) == "pin" }.flatMap(jsonObject)?["pin"]
                as? String, "monitor: \(monitor.output) \(monitor.errorOutput); pair: \(pair.errorOutput)")
        pair.send(pin + "\n")
        #expect(await pair.waitForExit(timeout: .seconds(30)) == 0, "pair: \(pair.output) \(pair.errorOutput)")
        keep("pair", pair)
        let paired = try #require(await monitor.line { lan.event($0) == "paired" }.flatMap(jsonObject))
        let listenerId = try #require(paired["listenerId"] as? String)

        // Listening, with a live audio+video stream recorded; a noise alert and a safety alert arrive.
        let recording = lan.listenerDirectory.appendingPathComponent("nursery.mkv")
        let listener = try network.start(
            network.b, lan.cribcall,
            ["listen", "--json", "--no-notify", "--open", "Nursery", "--video", "--record", recording.path]
                + lan.listenerData)
        defer { Task { await listener.stop() } }
        let started = await listener.line(timeout: .seconds(40)) { lan.event($0) == "stream_started" }
        #expect(started != nil, "listen: \(listener.output) \(listener.errorOutput); monitor: \(monitor.output)")
        let streaming = ContinuousClock.now
        // The parent finished the app's setup (as privacy_browser.py does below): safety alerts are raised from then.
        let setup = try await network.run(
            network.a, "curl",
            [
                "-fsS", "-X", "POST", "-H", "Content-Type: application/json", "-d",
                #"{"disclaimerAccepted": true, "setupComplete": true, "babyName": "Liam"}"#, monitorApp + "api/app",
            ])
        #expect(setup.status == 0, "setup: \(setup.stderrText)")
        let trigger = try await network.run(
            network.a, lan.cribcall, ["alert", "trigger", "face_covered"] + lan.monitorData)
        #expect(trigger.status == 0, "alert trigger: \(trigger.stderrText)")
        keep("alert-trigger", trigger)
        let safety = await listener.line(timeout: .seconds(10)) { line in
            lan.event(line) == "safety_alert" && jsonObject(line)?["kind"] as? String == "face_covered"
        }
        #expect(safety != nil, "no safety alert: \(listener.output.suffix(6))")
        let noise = await listener.line(timeout: .seconds(25)) { lan.event($0) == "noise" }
        #expect(noise != nil, "no noise alert: \(listener.output.suffix(6)); monitor: \(monitor.output.suffix(6))")
        try await Task.sleep(until: streaming + .seconds(8))
        await listener.stop(grace: .seconds(10))
        keep("listen-record", listener)
        let recorded = (try? FileManager.default.attributesOfItem(atPath: recording.path)[.size] as? Int) ?? 0
        #expect(recorded > 50_000, "the recording has \(recorded) bytes")

        // The apps for parents in headless Chromium: the monitor's on its own machine, live on its Monitor tab;
        // the listener's, playing the monitor live across the LAN.
        try await browse(in: network.a, "--monitor-url", monitorApp)
        let app = try network.start(
            network.b, lan.cribcall,
            ["listen", "--web", "0", "--json", "--no-notify", "--name", "Mum"] + lan.listenerData)
        defer { Task { await app.stop() } }
        let listenerApp = try #require(
            await app.line(timeout: .seconds(60)) { lan.event($0) == "web" }.flatMap(jsonObject)?["url"] as? String,
            "listen --web: \(app.output) \(app.errorOutput)")
        try await browse(in: network.b, "--listener-url", listenerApp)
        await app.stop(grace: .seconds(10))
        keep("listen-web", app)

        // Revoked on the monitor while the listener is connected: it is told, and stops.
        let last = try network.start(network.b, lan.cribcall, ["listen", "--json", "--no-notify"] + lan.listenerData)
        defer { Task { await last.stop() } }
        #expect(await last.line(timeout: .seconds(30)) { lan.event($0) == "connected" } != nil, "\(last.output)")
        let revoke = try await network.run(
            network.a, lan.cribcall, ["listeners", "revoke", listenerId] + lan.monitorData)
        #expect(revoke.status == 0, "revoke: \(revoke.stderrText)")
        keep("listeners-revoke", revoke)
        #expect(await last.line(timeout: .seconds(10)) { lan.event($0) == "unauthorized" } != nil, "\(last.output)")
        #expect(await last.waitForExit(timeout: .seconds(15)) != nil, "the listener kept running after revocation")
        keep("listen-revoked", last)
        #expect(await monitor.stop(grace: .seconds(10)) != nil, "the monitor did not stop")
        keep("monitor", monitor)
        for capture in captures { await capture.finish() }

        // On the wire.
        let (status, summary) = try await PrivacyCheck.run(
            captures.map(\.file), controlPorts: [ready.port], minimumMediaFlows: 2)
        #expect(status == 0 && summary["ok"] as? Bool == true, "privacy_check.py: \(summary)")
        print(
            "Privacy capture (\(artifacts.lastPathComponent)): captures \(summary["captures"] ?? "?"), addresses "
                + "\(summary["addresses"] ?? "?"), STUN \(summary["stun"] ?? "?"), media flows "
                + "\(summary["encryptedMediaFlows"] ?? "?") DTLS-SRTP of \(summary["mediaFlows"] ?? "?")")

        // At rest.
        let logDirectory = artifacts.appendingPathComponent("logs")
        try FileManager.default.createDirectory(at: logDirectory, withIntermediateDirectories: true)
        var logFiles: [String] = []
        for (name, text) in logs {
            let file = logDirectory.appendingPathComponent("\(name).log")
            try text.write(to: file, atomically: true, encoding: .utf8)
            logFiles.append(file.path)
        }
        let database = ["cribcall.sqlite", "cribcall.sqlite-wal", "cribcall.sqlite-shm", "identity.pem", "dtls.pem"]
        let atRest = try await Subprocess.run(
            try SRTPWireCheck.python(),
            [
                Fixtures.repositoryRoot.appendingPathComponent("Tests/Interop/wire/at_rest_check.py").path,
                "--data-dir", "\(lan.monitorDirectory.path):\(database.joined(separator: ","))",
                "--data-dir", "\(lan.listenerDirectory.path):\((database + ["nursery.mkv"]).joined(separator: ","))",
                "--secret", "the PIN=\(pin)", "--secret", "the pairing token=\(token)",
                "--secret", "the monitor app's secret=\(Self.secret(of: monitorApp))",
                "--secret", "the listener app's secret=\(Self.secret(of: listenerApp))",
                "--display-event", "pin", "--display-event", "qr", "--display-event", "web",
            ] + logFiles.flatMap { ["--log", $0] })
        let verdict = try #require(
            atRest.stdoutText.split(separator: "\n").last.flatMap { jsonObject(String($0)) },
            "at_rest_check.py: \(atRest.stderrText)")
        #expect(atRest.status == 0 && verdict["ok"] as? Bool == true, "at_rest_check.py: \(verdict)")
        print(
            "At rest (\(artifacts.lastPathComponent)): files \(verdict["dataDirs"] ?? "?"), databases "
                + "\(verdict["databases"] ?? "?"), \(verdict["linesChecked"] ?? "?") log lines checked")
        // The secrets searched for are the ones the parent was shown (so the search would have found them).
        let shown = verdict["secretsShownOnlyBy"] as? [String: Int] ?? [:]
        #expect(shown.count == 4 && shown.values.allSatisfy { $0 >= 1 }, "\(verdict)")
        #expect((verdict["keyNeedles"] as? Int ?? 0) >= 10, "\(verdict)")
        #expect((verdict["filesSearchedForSecrets"] as? Int ?? 0) >= 6, "both databases and key files: \(verdict)")
    }
}
