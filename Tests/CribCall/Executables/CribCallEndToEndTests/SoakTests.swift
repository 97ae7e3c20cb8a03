import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A night at the monitor, compressed (issue 32, item 13; seed 003 §9): `make soak` runs it, `make test` does not.
/// `make soak` runs an hour; `make soak MINUTES=480` a whole night.
///
/// On two hosts of a private LAN (network namespaces with avahi): the monitor in the nursery (`--safety`, the test
/// camera and test:cry, a 3 s cry every 10 s, on its default port), and in the parents' room two listeners paired by
/// its QR code and by its PIN — one `cribcall listen` that opens and records a stream for every noise (onNoise open, the monitor's
/// auto-stream on for 5 s), one `cribcall listen --web` whose app stays open all night in a real Chromium
/// (`soak_browser.py`), answering every alert as a parent would. Meanwhile, from outside: a safety alert raised every
/// 20 s through the monitor's real path (`cribcall alert trigger`), the link cut for 25 s every 5 minutes (both
/// veth ends down), once a new address for the nursery's host with the monitor back on another port (the
/// listeners find it by mDNS), once a power cut (SIGKILL, started again on the same data).
///
/// Every minute it reads RSS, descriptors, threads and CPU of each process (Chromium with all its processes) and
/// the page's JS heap. It fails on: an alert the monitor raised that a listener did not get, or got twice; a
/// listener that did not say the link was lost, or did not come back; a stream that did not play outside a
/// fault; an alert the page did not show; a process that did not exit cleanly; growth (a least-squares slope after
/// a warm-up) that would add, over 8 hours, more than ``Limits``. The figures (a table every few minutes, the
/// slopes, the counts) go to `.build/soak/<time>/report.md`, every sample to `samples.csv` (rewritten each minute) and
/// every line of progress to `progress.log`.
@Suite(
    .heavy(cores: 1, "a monitor, two listeners and Chromium in network namespaces for an hour or a night"),
    .enabled(if: Limits.minutes != nil, "`make soak` runs it (HOMEAPPS_SOAK_MINUTES)"))
struct SoakTests {
    @Test("a compressed night: alerts, streams, link cuts, a new address, a power cut; nothing lost, nothing grows")
    func night() async throws {
        guard CribCallEndToEndTests.canRun("soak"), let minutes = Limits.minutes else { return }
        guard minutes >= 5 else {
            Issue.record("HOMEAPPS_SOAK_MINUTES must be at least 5 (a night: 480)")
            return
        }
        try await MDNSNetwork.with(avahiIn: ["a", "b"]) { network in
            let night = try SoakNight(network, minutes: minutes)
            defer { night.removeData() }
            try await night.run()
        }
    }
}

/// Growth allowed over a whole night (8 hours), projected from the fitted slope.
enum Limits {
    /// How long the night lasts (`make soak MINUTES=…`); nil outside `make soak`.
    static let minutes = ProcessInfo.processInfo.environment["HOMEAPPS_SOAK_MINUTES"].flatMap(Double.init)
    static let night = 8.0 * 3600
    /// Resident memory of a CribCall process, MiB.
    static let rssMiB = 32.0
    /// Resident memory of Chromium with all its processes, MiB.
    static let browserRssMiB = 256.0
    /// The page's JS heap, MiB.
    static let heapMiB = 32.0
    static let descriptors = 16.0
    static let threads = 16.0
    /// The least measured time after the warm-up that growth is judged on, seconds.
    static let judgedSpan = 30.0 * 60
}

/// One reading of one process.
struct SoakReading {
    var role: String
    var pid: Int32
    /// Seconds since the night began.
    var t: Double
    var sample: ProcessSample
    /// When this process (this pid) was first read, seconds since the night began.
    var since: Double
}

/// A fault injected from outside: from `from` until `until` seconds into the night (plus a minute to recover).
struct SoakFault {
    var name: String
    var from: Double
    var until: Double

    func covers(_ t: Double) -> Bool { t >= from - 5 && t <= until + 60 }
}

final class SoakNight: @unchecked Sendable {  // used by one test task only
    let network: MDNSNetwork
    var lan: TwoHouseholdDevices
    /// The night's own copy of `cribcall` and its resources: a rebuild meanwhile does not change what restarts.
    let binaries: URL
    let webDirectory: URL
    let recordings: URL
    let artifacts: URL
    let duration: Double
    let warmUp: Double
    let started = ContinuousClock.now
    /// When the night began, unix seconds (the listeners' lines carry the monitor's times in unix milliseconds).
    let wallStart = Date().timeIntervalSince1970
    static let movedAddress = "10.78.0.3"

    var monitors: [BackgroundProcess] = []
    var monitorPort = 48080
    var cli: BackgroundProcess?
    var web: BackgroundProcess?
    var browser: BackgroundProcess?
    var readings: [SoakReading] = []
    var heap: [(t: Double, bytes: Double)] = []
    var faults: [SoakFault] = []
    var drops = 0
    var triggered = 0
    var refused: [String] = []
    var failures: [String] = []

    init(_ network: MDNSNetwork, minutes: Double) throws {
        self.network = network
        lan = try TwoHouseholdDevices(network)
        binaries = try Subprocess.temporaryDirectory("soak-bin")
        let built = URL(fileURLWithPath: lan.cribcall)
        let siblings = try FileManager.default.contentsOfDirectory(atPath: built.deletingLastPathComponent().path)
        for name in [built.lastPathComponent] + siblings.filter({ $0.hasSuffix(".resources") }) {
            try FileManager.default.copyItem(
                at: built.deletingLastPathComponent().appendingPathComponent(name),
                to: binaries.appendingPathComponent(name))
        }
        lan.cribcall = binaries.appendingPathComponent(built.lastPathComponent).path
        webDirectory = try Subprocess.temporaryDirectory("soak-web")
        recordings = try Subprocess.temporaryDirectory("soak-recordings")
        let stamp = ISO8601DateFormatter().string(from: Date()).replacingOccurrences(of: ":", with: "")
        artifacts = Fixtures.repositoryRoot.appendingPathComponent(".build/soak/\(stamp)")
        try FileManager.default.createDirectory(at: artifacts, withIntermediateDirectories: true)
        duration = minutes * 60
        warmUp = min(600, duration * 0.2)
    }

    func removeData() {
        lan.removeData()
        for directory in [webDirectory, recordings, binaries] { try? FileManager.default.removeItem(at: directory) }
    }

    var now: Double { Self.seconds(ContinuousClock.now - started) }
    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
    var monitor: BackgroundProcess? { monitors.last }

    /// Also appended to `progress.log` beside the report, so a night that is cut short still tells what it saw.
    func say(_ text: String) {
        let line = Data(String(format: "soak %6.0f s: %@\n", now, text).utf8)
        FileHandle.standardError.write(line)
        let log = artifacts.appendingPathComponent("progress.log")
        if !FileManager.default.fileExists(atPath: log.path) {
            FileManager.default.createFile(atPath: log.path, contents: nil)
        }
        if let handle = try? FileHandle(forWritingTo: log) {
            _ = try? handle.seekToEnd()
            try? handle.write(contentsOf: line)
            try? handle.close()
        }
    }

    func fail(_ text: String) {
        failures.append(text)
        say("FAIL: \(text)")
    }

    // MARK: The night

    func run() async throws {
        try await setUp()
        defer {
            for process in [browser, web, cli] + monitors.map(Optional.some) {
                if let process, process.status == nil { kill(process.processIdentifier, SIGKILL) }
            }
        }
        var nextSample = 0.0
        var nextCheckpoint = 1800.0
        var raisedAtCheckpoint: (noise: Set<Int>, alerts: Set<String>) = ([], [])
        var nextTrigger = 30.0
        var nextDrop = 180.0
        var dropEnds: Double?
        var moved = false
        var cut = false
        let kinds = ["crying", "stillness", "on_stomach", "face_covered"]
        while now < duration {
            let t = now
            if t >= nextSample {
                sample()
                nextSample += 60
            }
            if t >= nextCheckpoint {
                raisedAtCheckpoint = checkpoint(since: raisedAtCheckpoint)
                nextCheckpoint += 1800
            }
            if let ends = dropEnds {
                if t >= ends {
                    try await network.setLink(up: true)
                    faults[faults.count - 1].until = t
                    dropEnds = nil
                    say("link up")
                }
            } else if !moved, t >= duration * 0.8 {
                try await moveMonitor()
                moved = true
            } else if !cut, t >= duration * 0.9 {
                try await cutPower()
                cut = true
            } else if t >= nextDrop {
                try await network.setLink(up: false)
                faults.append(SoakFault(name: "link cut", from: t, until: t + 25))
                drops += 1
                dropEnds = t + 25
                nextDrop += 300
                say("link down (\(drops))")
            } else if t >= nextTrigger {
                await trigger(kinds[triggered % kinds.count])
                nextTrigger += 20
            }
            for process in [cli, web, browser] where process?.status != nil {
                fail(
                    "a process of the night exited early (status \(process?.status ?? -1)): \(process?.errorOutput.suffix(600) ?? "")"
                )
                return try await finish()
            }
            try await Task.sleep(for: .seconds(1))
        }
        try await finish()
    }

    func setUp() async throws {
        let (monitor, ready) = try await lan.startMonitor(
            ["--name", "Nursery", "--safety", "--video-source", "test", "--qr"])
        monitors.append(monitor)
        monitorPort = ready.port
        let settings = try await Subprocess.run(
            lan.cribcall, ["settings", "set", "autoStream=audio", "autoStreamSec=5"] + lan.monitorData)
        guard settings.status == 0 else {
            throw MDNSNetwork.SetupError(description: "settings set: \(settings.stdoutText) \(settings.stderrText)")
        }
        let qr = await monitor.line { self.lan.event($0) == "qr" }.flatMap(jsonObject)?["text"] as? String
        guard let qr else { throw MDNSNetwork.SetupError(description: "no QR code: \(monitor.output)") }
        // One parent scans the QR code, the other pairs by mDNS and the PIN the monitor shows.
        let byQR = try await network.run(
            network.b, lan.cribcall,
            ["pair", "--qr", qr, "--address", "\(MDNSNetwork.addressA):\(ready.port)", "--name", "Dad"]
                + lan.listenerData)
        guard byQR.status == 0 else {
            throw MDNSNetwork.SetupError(description: "pair --qr: \(byQR.stdoutText) \(byQR.stderrText)")
        }
        let byPIN = try network.start(
            network.b, lan.cribcall,
            ["pair", "--pin", "--monitor", "Nursery", "--name", "Phone", "--data-dir", webDirectory.path],
            acceptsInput: true)
        defer { Task { await byPIN.stop() } }
        guard
            let pin = await monitor.line(timeout: .seconds(30), where: { self.lan.event($0) == "pin" })
                .flatMap(jsonObject)?["pin"] as? String
        else { throw MDNSNetwork.SetupError(description: "no PIN: \(monitor.output) \(byPIN.errorOutput)") }
        byPIN.send(pin + "\n")
        guard await byPIN.waitForExit(timeout: .seconds(30)) == 0 else {
            throw MDNSNetwork.SetupError(description: "pair --pin: \(byPIN.output) \(byPIN.errorOutput)")
        }
        let cli = try network.start(
            network.b, lan.cribcall,
            ["listen", "--json", "--no-notify", "--name", "Dad", "--on-noise", "open", "--record", recordings.path]
                + lan.listenerData)
        self.cli = cli
        let web = try network.start(
            network.b, lan.cribcall,
            ["listen", "--json", "--no-notify", "--name", "Phone", "--web", "0", "--data-dir", webDirectory.path])
        self.web = web
        for (name, listener) in [("Dad", cli), ("Phone", web)] {
            guard await listener.line(timeout: .seconds(30), where: { self.lan.event($0) == "connected" }) != nil
            else {
                throw MDNSNetwork.SetupError(
                    description: "listener \(name) did not connect: \(listener.output) \(listener.errorOutput)")
            }
        }
        let url = await web.line { self.lan.event($0) == "web" }.flatMap(jsonObject)?["url"] as? String
        guard let url, let python = InteropPeers.python else {
            throw MDNSNetwork.SetupError(description: "no app address: \(web.output)")
        }
        let script = Fixtures.repositoryRoot.appendingPathComponent("Tests/Interop/cribalert/soak_browser.py").path
        let browser = try BackgroundProcess(
            "ip",
            [
                "netns", "exec", network.b, python, "-u", script, "--listener-url", url, "--monitor-name",
                "Nursery", "--sample-seconds", "60", "--artifacts", artifacts.appendingPathComponent("browser").path,
            ], acceptsInput: true)
        self.browser = browser
        guard await browser.line(timeout: .seconds(180), where: { self.lan.event($0) == "ready" }) != nil else {
            throw MDNSNetwork.SetupError(
                description: "soak_browser.py did not start: \(browser.output) \(browser.errorOutput.suffix(2000))")
        }
        say("set up: monitor on port \(ready.port), two listeners, the app open in Chromium; \(artifacts.path)")
    }

    /// The nursery's host gets a new lease; the monitor comes back on the next port.
    func moveMonitor() async throws {
        let t = now
        say("the monitor moves to \(Self.movedAddress):\(monitorPort + 1)")
        if let monitor, let status = await monitor.stop(grace: .seconds(10)), status != 0 {
            fail("the monitor stopped by SIGTERM exited \(status)")
        }
        try await NetworkNamespace.ip("-n", network.a, "addr", "del", "\(MDNSNetwork.addressA)/24", "dev", network.a)
        try await NetworkNamespace.ip("-n", network.a, "addr", "add", "\(Self.movedAddress)/24", "dev", network.a)
        monitorPort += 1
        let (moved, _) = try await lan.startMonitor(
            ["--name", "Nursery", "--safety", "--video-source", "test", "--port", "\(monitorPort)"])
        monitors.append(moved)
        faults.append(SoakFault(name: "new address", from: t, until: now + 60))
    }

    /// A power cut: the monitor is killed, and started again on the same data.
    func cutPower() async throws {
        let t = now
        say("power cut at the monitor")
        if let monitor {
            kill(monitor.processIdentifier, SIGKILL)
            _ = await monitor.waitForExit(timeout: .seconds(10))
        }
        let (again, _) = try await lan.startMonitor(
            ["--name", "Nursery", "--safety", "--video-source", "test", "--port", "\(monitorPort)"])
        monitors.append(again)
        faults.append(SoakFault(name: "power cut", from: t, until: now + 30))
    }

    func trigger(_ kind: String) async {
        triggered += 1
        guard
            let result = try? await Subprocess.run(
                lan.cribcall, ["alert", "trigger", kind, "--json"] + lan.monitorData)
        else { return }
        if result.status != 0 { refused.append("\(kind) at \(Int(now)) s: \(result.stdoutText)\(result.stderrText)") }
    }

    func sample() {
        let t = now
        var roles: [(String, BackgroundProcess?, Bool)] = [("monitor", monitor, false), ("listener", cli, false)]
        roles += [("web listener", web, false), ("Chromium", browser, true)]
        for (role, process, tree) in roles {
            guard let process, process.status == nil,
                let sample = ProcessSample.read(process.processIdentifier, descendants: tree)
            else { continue }
            let since = readings.last { $0.role == role && $0.pid == process.processIdentifier }?.since ?? t
            readings.append(SoakReading(role: role, pid: process.processIdentifier, t: t, sample: sample, since: since))
        }
        if let last = browser?.output.last(where: { lan.event($0) == "sample" }).flatMap(jsonObject),
            let bytes = last["js_heap_used"] as? Double, let at = last["t"] as? Double
        {
            if heap.last?.t != at { heap.append((at, bytes)) }
        }
        // Rewritten each minute: the curve so far survives a run that is killed before the morning.
        try? csv().write(to: artifacts.appendingPathComponent("samples.csv"), atomically: true, encoding: .utf8)
        if let line = readings.last(where: { $0.role == "monitor" }) {
            say(
                String(
                    format: "monitor %.1f MiB, %d fds, %d threads", Double(line.sample.rssKiB) / 1024,
                    line.sample.descriptors, line.sample.threads))
        }
    }

    /// Every 30 minutes, what the morning's check will find so far (said, not judged: a night cut short still tells
    /// whether its alerts arrived): every alert raised before the previous checkpoint has reached both listeners, and
    /// none arrived twice. Returns what has been raised by now, for the next one.
    func checkpoint(since earlier: (noise: Set<Int>, alerts: Set<String>)) -> (noise: Set<Int>, alerts: Set<String>) {
        let noise = Set(monitors.flatMap { lan.monitorSeqs($0) })
        let alerts = Set(monitors.flatMap { values($0, "safety_alert", "alertId") as [String] })
        for (name, listener) in [("listener", cli), ("web listener", web)] {
            guard let listener else { continue }
            let heardNoise: [Int] = values(listener, "noise", "seq")
            let heardAlerts: [String] = values(listener, "safety_alert", "alertId")
            let missing = earlier.noise.subtracting(heardNoise).count + earlier.alerts.subtracting(heardAlerts).count
            let twice = heardNoise.count - Set(heardNoise).count + heardAlerts.count - Set(heardAlerts).count
            say(
                "checkpoint \(name): \(earlier.noise.count + earlier.alerts.count) alerts raised before the last "
                    + "checkpoint, \(missing) missing, \(twice) arrived twice; \(heardNoise.count) noise and "
                    + "\(heardAlerts.count) safety alerts heard of \(noise.count) and \(alerts.count) raised")
        }
        return (noise, alerts)
    }

    // MARK: The morning: what reached the parents

    func finish() async throws {
        say("settling: every alert the monitor raised should reach both listeners")
        let end = now
        let raisedNoise = Set(monitors.flatMap { lan.monitorSeqs($0) })
        let raisedAlerts = Set(monitors.flatMap { values($0, "safety_alert", "alertId") as [String] })
        let deadline = ContinuousClock.now + .seconds(90)
        while ContinuousClock.now < deadline {
            let complete = [cli, web].allSatisfy { listener in
                guard let listener else { return false }
                return raisedNoise.isSubset(of: values(listener, "noise", "seq") as [Int])
                    && raisedAlerts.isSubset(of: values(listener, "safety_alert", "alertId") as [String])
            }
            if complete { break }
            try await Task.sleep(for: .seconds(2))
        }
        // The end of its stdin asks soak_browser.py for its summary (a SIGTERM may be blocked in its signal mask).
        browser?.closeInput()
        var browserStatus = await browser?.waitForExit(timeout: .seconds(60))
        if browserStatus == nil { browserStatus = await browser?.stop(grace: .seconds(5)) }
        let cliStatus = await cli?.stop(grace: .seconds(10))
        let webStatus = await web?.stop(grace: .seconds(10))
        let monitorStatus = await monitor?.stop(grace: .seconds(10))

        for (name, listener) in [("listener", cli), ("web listener", web)] {
            guard let listener else { continue }
            checkDelivery(name, "noise alerts", raised: raisedNoise, received: values(listener, "noise", "seq"))
            checkDelivery(
                name, "safety alerts", raised: raisedAlerts, received: values(listener, "safety_alert", "alertId"))
            let lostLinks = listener.output.filter { lan.event($0) == "link_lost" }.count
            let back = listener.output.filter { lan.event($0) == "link_restored" }.count
            if lostLinks < drops { fail("\(name): said the link was lost \(lostLinks) times for \(drops) cuts") }
            if back < lostLinks { fail("\(name): the link came back \(back) times after \(lostLinks) losses") }
        }
        checkStreams()
        checkBrowser(status: browserStatus)
        for (name, status) in [("listener", cliStatus), ("web listener", webStatus), ("monitor", monitorStatus)]
        where status != 0 {
            fail("\(name) stopped by SIGTERM exited \(status.map(String.init) ?? "late (killed)")")
        }
        if !refused.isEmpty && refused.count * 2 > triggered {
            fail("the monitor refused \(refused.count) of \(triggered) triggered alerts: \(refused.prefix(3))")
        }
        checkGrowth()
        let report = self.report(end: end, noise: raisedNoise.count, alerts: raisedAlerts.count)
        try report.write(to: artifacts.appendingPathComponent("report.md"), atomically: true, encoding: .utf8)
        try csv().write(to: artifacts.appendingPathComponent("samples.csv"), atomically: true, encoding: .utf8)
        if let browser {
            try (browser.output.joined(separator: "\n") + "\n").write(
                to: artifacts.appendingPathComponent("browser.jsonl"), atomically: true, encoding: .utf8)
        }
        print(report)
        for failure in failures { Issue.record(Comment(rawValue: failure)) }
    }

    /// `key` of every `--json` line of `process` whose event is `event`, in order.
    func values<Value>(_ process: BackgroundProcess, _ event: String, _ key: String) -> [Value] {
        process.output.compactMap(jsonObject).filter { $0["event"] as? String == event }.compactMap {
            $0[key] as? Value
        }
    }

    /// Fails for what was raised and never received, and for what was received twice.
    func checkDelivery<Value: Hashable & Comparable>(
        _ name: String, _ what: String, raised: Set<Value>, received: [Value]
    ) {
        let lost = raised.subtracting(received).sorted()
        let twice = Dictionary(grouping: received, by: { $0 }).filter { $0.value.count > 1 }.keys.sorted()
        if !lost.isEmpty { fail("\(name): \(lost.count) \(what) never arrived (\(lost.prefix(20)))") }
        if !twice.isEmpty { fail("\(name): \(twice.count) \(what) arrived twice (\(twice.prefix(20)))") }
    }

    /// Every stream the recording listener was offered played, outside the faults: its recording holds sound.
    var streams = (started: 0, played: 0, silent: [String](), neverStarted: [String]())

    func checkStreams() {
        guard let cli else { return }
        let events = cli.output.compactMap(jsonObject)
        var started: Set<String> = []
        var files: [String: String] = [:]
        for event in events {
            guard let session = event["sessionId"] as? String else { continue }
            switch event["event"] as? String {
            case "stream_started": started.insert(session)
            case "recording": files[session] = event["file"] as? String
            default: break
            }
        }
        streams.started = started.count
        for (session, file) in files {
            let size = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0
            // A second of 48 kHz 16-bit audio, at least, in every recorded stream.
            if size > 44 + 48_000 {
                streams.played += 1
            } else {
                streams.silent.append("\(session.prefix(8)) \(size) B")
            }
        }
        for event in events where event["event"] as? String == "stream_ended" {
            guard let session = event["sessionId"] as? String, !started.contains(session) else { continue }
            streams.neverStarted.append("\(session.prefix(8)): \(event["reason"] as? String ?? "")")
        }
        // Which of them fell in a fault is not in the listener's lines; allow one per fault.
        let allowed = faults.count
        if streams.silent.count + streams.neverStarted.count > allowed {
            fail(
                "\(streams.silent.count) recorded streams held no sound and \(streams.neverStarted.count) never "
                    + "started (\(allowed) faults): \(streams.silent.prefix(5)) \(streams.neverStarted.prefix(5))")
        }
        if streams.started < Int(duration / 60) {
            fail("only \(streams.started) streams started in \(Int(duration / 60)) minutes")
        }
    }

    var browserSummary: [String: Any] = [:]

    func checkBrowser(status: Int32?) {
        guard let browser else { return }
        guard let final = browser.output.last.flatMap(jsonObject), final["ok"] != nil else {
            fail("soak_browser.py printed no summary (status \(status ?? -1)): \(browser.errorOutput.suffix(1500))")
            return
        }
        browserSummary = final
        if final["ok"] as? Bool != true {
            fail("the app in Chromium: \(final["failure"] ?? "not ok") (status \(status ?? -1))")
        }
        let shown = Set(((final["shown"] as? [[String: Any]]) ?? []).compactMap { $0["alertId"] as? String })
        // Every alert the web listener got live, outside a fault, was on the parent's screen.
        guard let web else { return }
        var missing: [String] = []
        for (index, line) in web.output.enumerated() {
            guard let event = jsonObject(line), event["replayed"] as? Bool == false,
                ["noise", "safety_alert"].contains(event["event"] as? String ?? ""),
                let at = (event["timestamp"] ?? event["detectedAt"]) as? Double
            else { continue }
            // Around a fault the page may get an alert while its own link to the listener is being restored.
            let t = at / 1000 - wallStart
            if faults.contains(where: { $0.covers(t) }) { continue }
            let id = event["alertId"] as? String ?? (event["eventId"] as? String).map { "noise-\($0)" } ?? "?"
            if !shown.contains(id) { missing.append("\(index):\(id)") }
        }
        browserSummary["missing"] = missing.count
        if !missing.isEmpty { fail("the app in Chromium never showed \(missing.count) alerts: \(missing.prefix(10))") }
    }

    // MARK: Growth

    struct Growth {
        var role: String
        var pid: Int32
        var figure: String
        var perNight: Double
        var limit: Double
        var span: Double
        var judged: Bool { span >= Limits.judgedSpan }
    }

    var growth: [Growth] = []

    func checkGrowth() {
        let segments = Dictionary(grouping: readings) { "\($0.role)#\($0.pid)" }
        for (_, rows) in segments.sorted(by: { $0.key < $1.key }) {
            guard let first = rows.first else { continue }
            let kept = rows.filter { $0.t >= first.since + warmUp }
            let span = (kept.last?.t ?? 0) - (kept.first?.t ?? 0)
            let browser = first.role == "Chromium"
            let figures: [(String, (ProcessSample) -> Double, Double)] = [
                ("RSS MiB", { Double($0.rssKiB) / 1024 }, browser ? Limits.browserRssMiB : Limits.rssMiB),
                ("descriptors", { Double($0.descriptors) }, Limits.descriptors),
                ("threads", { Double($0.threads) }, Limits.threads),
            ]
            for (figure, value, limit) in figures {
                guard let fit = LinearFit(kept.map { ($0.t, value($0.sample)) }) else { continue }
                growth.append(
                    Growth(
                        role: first.role, pid: first.pid, figure: figure, perNight: fit.slope * Limits.night,
                        limit: limit, span: span))
            }
        }
        let heapKept = heap.filter { $0.t >= warmUp }
        if let fit = LinearFit(heapKept.map { ($0.t, $0.bytes / 1_048_576) }) {
            let span = (heapKept.last?.t ?? 0) - (heapKept.first?.t ?? 0)
            growth.append(
                Growth(
                    role: "the page", pid: browser?.processIdentifier ?? 0, figure: "JS heap MiB",
                    perNight: fit.slope * Limits.night, limit: Limits.heapMiB, span: span))
        }
        for item in growth where item.judged && item.perNight > item.limit {
            fail(
                String(
                    format: "%@ (pid %d): %@ grows by %.1f per night (limit %.0f)", item.role, item.pid, item.figure,
                    item.perNight, item.limit))
        }
    }

    // MARK: Report

    func report(end: Double, noise: Int, alerts: Int) -> String {
        var lines = [
            "# Soak: \(Int(duration / 60)) minutes (\(failures.isEmpty ? "passed" : "FAILED"))", "",
            "Raised by the monitor: \(noise) noise alerts, \(alerts) safety alerts (\(triggered) triggered, "
                + "\(refused.count) refused). Faults: \(faults.map { "\($0.name) at \(Int($0.from / 60)) min" }.joined(separator: ", ")).",
            "Streams to the recording listener: \(streams.started) started, \(streams.played) recorded with sound, "
                + "\(streams.silent.count) silent, \(streams.neverStarted.count) never started.",
            "The app in Chromium: \((browserSummary["shown"] as? [Any])?.count ?? 0) alerts shown, "
                + "\(browserSummary["tones"] ?? 0) tones, \(browserSummary["notifications"] ?? 0) notifications, "
                + "\(browserSummary["missing"] ?? 0) not shown.",
            "", "## Every process, every few minutes", "",
            "| min | " + roles.map { "\($0) RSS MiB · fds · threads · CPU %" }.joined(separator: " | ") + " |",
            "|---|" + roles.map { _ in "---|" }.joined(),
        ]
        let step = max(60.0, (duration / 20 / 60).rounded(.up) * 60)
        var previous: [String: SoakReading] = [:]
        var nextRow = 0.0
        for t in Set(readings.map(\.t)).sorted() {
            let row = readings.filter { $0.t == t }
            defer { for reading in row { previous[reading.role] = reading } }
            guard t >= nextRow else { continue }
            nextRow = t + step - 5
            let cells = roles.map { role -> String in
                guard let reading = row.first(where: { $0.role == role }) else { return "–" }
                var cpu = "–"
                if let before = previous[role], before.pid == reading.pid, reading.t > before.t {
                    cpu = String(
                        format: "%.1f",
                        (reading.sample.cpuSeconds - before.sample.cpuSeconds) / (reading.t - before.t) * 100)
                }
                return String(
                    format: "%.1f · %d · %d · %@", Double(reading.sample.rssKiB) / 1024, reading.sample.descriptors,
                    reading.sample.threads, cpu)
            }
            lines.append("| \(Int(t / 60)) | " + cells.joined(separator: " | ") + " |")
        }
        if !heap.isEmpty {
            let every = max(1, heap.count / 12)
            let points = heap.enumerated().filter { $0.offset % every == 0 || $0.offset == heap.count - 1 }
            lines += [
                "",
                "The page's JS heap after a forced GC, MiB, by minute: "
                    + points.map { String(format: "%d: %.1f", Int($0.element.t / 60), $0.element.bytes / 1_048_576) }
                    .joined(separator: " · ") + ".",
            ]
        }
        lines += [
            "", "## Growth projected over 8 hours (least squares after a \(Int(warmUp / 60))-minute warm-up)", "",
            "| process | figure | per night | limit | judged |", "|---|---|---|---|---|",
        ]
        for item in growth {
            lines.append(
                String(
                    format: "| %@ (%d) | %@ | %+.1f | %.0f | %@ |", item.role, item.pid, item.figure, item.perNight,
                    item.limit, item.judged ? "yes" : "no (\(Int(item.span / 60)) min measured)"))
        }
        if !failures.isEmpty { lines += ["", "## Failures", ""] + failures.map { "- \($0)" } }
        return lines.joined(separator: "\n") + "\n"
    }

    var roles: [String] { ["monitor", "listener", "web listener", "Chromium"] }

    func csv() -> String {
        (["role,pid,t,rss_kib,descriptors,threads,cpu_s,processes"]
            + readings.map {
                "\($0.role),\($0.pid),\(Int($0.t)),\($0.sample.rssKiB),\($0.sample.descriptors),\($0.sample.threads),"
                    + String(format: "%.2f", $0.sample.cpuSeconds) + ",\($0.sample.processes)"
            }).joined(separator: "\n") + "\n"
    }
}
