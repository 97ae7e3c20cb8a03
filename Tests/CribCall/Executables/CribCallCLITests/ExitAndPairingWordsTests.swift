import CanonicalJSON
import Foundation
import TestSupport
import Testing

/// What a service manager and a parent read from `cribcall` (issue 32, items 4 and 5): exit statuses that say what
/// happened (a monitor that can no longer hear fails, a revoked listener says so, a normal stop is not a lost link),
/// and pairing that says "wrong PIN", counts the tries left on both sides, and names the real cause when the LAN
/// cannot be searched.
@Suite("cribcall: exit statuses, and the words of pairing", .serialized, .heavy(cores: 0.5, "monitors and listeners"))
struct ExitAndPairingWordsTests {
    static func cribcall(_ arguments: [String], environment: [String: String] = [:]) async throws -> Subprocess.Result {
        try await Subprocess.run(try Subprocess.builtProduct("cribcall"), arguments, environment: environment)
    }

    static func object(_ line: String?) -> JSONValue? {
        line.flatMap { try? JSONParser().parse(Array($0.utf8)) }
    }

    @Test("--port outside 0…65535 is refused with why (70000 listened on port 4464)")
    func portOutOfRange() async throws {
        let data = try Subprocess.temporaryDirectory("cribcall-port")
        defer { try? FileManager.default.removeItem(at: data) }
        // A process, not a run to completion: the defect was a monitor that served (on another port) and never ended.
        let refused = try BackgroundProcess(
            try Subprocess.builtProduct("cribcall"),
            ["monitor", "--port", "70000", "--audio-source", "test:silence", "--no-discovery", "--data-dir", data.path])
        defer { Task { await refused.stop() } }
        #expect(await refused.waitForExit(timeout: .seconds(30)) == 64, "\(refused.output) \(refused.errorOutput)")
        #expect(refused.errorOutput.contains("--port 70000 is not a UDP port"), "\(refused.errorOutput)")
        #expect(!refused.output.contains { $0.contains("listening") }, "nothing was served: \(refused.output)")
    }

    @Test("a monitor whose microphone goes away (its PulseAudio server killed) exits 1 with why, to be restarted")
    func microphoneLost() async throws {
        guard let pulse = try await PulseAudioServer.start(for: "the lost-microphone exit test") else { return }
        let data = try Subprocess.temporaryDirectory("cribcall-mic")
        defer { try? FileManager.default.removeItem(at: data) }
        let monitor = try BackgroundProcess(
            try Subprocess.builtProduct("cribcall"),
            [
                "monitor", "--port", "0", "--json", "--no-discovery", "--audio-source",
                "pulse:\(PulseAudioServer.microphone)", "--data-dir", data.path,
            ], environment: pulse.environment)
        defer { Task { await monitor.stop() } }
        _ = try await monitor.ready("cribcall monitor") { $0.contains(#""event":"ready""#) }
        await pulse.kill()
        let status = await monitor.waitForExit(timeout: .seconds(60))
        #expect(status == 1, "a monitor that cannot hear must not exit 0 (status \(String(describing: status)))")
        #expect(
            monitor.errorOutput.contains("could not hear the room") && monitor.errorOutput.contains("--audio-source"),
            "\(monitor.errorOutput)")
        await pulse.stop()
    }

    @Test(
        "a listener stopped by its person exits 0 without a lost link; one its monitor revoked exits 77 with what to do"
    )
    func listenerExits() async throws {
        let monitorData = try Subprocess.temporaryDirectory("cribcall-exit-monitor")
        let listenerData = try Subprocess.temporaryDirectory("cribcall-exit-listener")
        defer {
            try? FileManager.default.removeItem(at: monitorData)
            try? FileManager.default.removeItem(at: listenerData)
        }
        let monitor = try await PairingMonitor.start(data: monitorData, [])
        defer { Task { await monitor.process.stop() } }
        let paired = try await monitor.pair(listener: listenerData)
        #expect(paired.status == 0, "\(paired.stderrText)")
        let listenerId = try #require(
            Self.object(await monitor.process.line { $0.contains(#""event":"paired""#) })?["listenerId"]?.stringValue)

        // As a person (and `make demo`) runs it: text on the terminal.
        func listen() async throws -> BackgroundProcess {
            let listener = try BackgroundProcess(
                try Subprocess.builtProduct("cribcall"), ["listen", "--no-notify", "--data-dir", listenerData.path])
            let connected = await listener.line(timeout: .seconds(30)) { $0.hasPrefix("Connected to ") }
            #expect(connected != nil, "\(listener.output) \(listener.errorOutput)")
            return listener
        }
        let first = try await listen()
        #expect(await first.stop(grace: .seconds(10)) == 0, "\(first.errorOutput)")
        #expect(
            !first.output.contains { $0.contains("Lost the link") } && !first.errorOutput.contains("CancellationError"),
            "quitting is not a lost link: \(first.output) \(first.errorOutput)")

        let second = try await listen()
        defer { Task { await second.stop() } }
        let revoked = try await Self.cribcall(["listeners", "revoke", listenerId, "--data-dir", monitorData.path])
        #expect(revoked.status == 0, "\(revoked.stderrText)")
        let status = await second.waitForExit(timeout: .seconds(30))
        #expect(status == 77, "revoked: \(String(describing: status)) \(second.output) \(second.errorOutput)")
        #expect(second.errorOutput.contains("pair again with `cribcall pair`"), "\(second.errorOutput)")
    }

    @Test(
        "pairing by PIN: a PIN that cannot be right is refused first; a wrong one says so, with the tries left on both sides"
    )
    func wrongPIN() async throws {
        let monitorData = try Subprocess.temporaryDirectory("cribcall-pin-monitor")
        let listenerData = try Subprocess.temporaryDirectory("cribcall-pin-listener")
        defer {
            try? FileManager.default.removeItem(at: monitorData)
            try? FileManager.default.removeItem(at: listenerData)
        }
        let monitor = try BackgroundProcess(
            try Subprocess.builtProduct("cribcall"),
            [
                "monitor", "--port", "0", "--json", "--no-discovery", "--audio-source", "test:silence",
                "--data-dir", monitorData.path,
            ])
        defer { Task { await monitor.stop() } }
        let ready = try #require(Self.object(try await monitor.ready("cribcall monitor") { $0.contains(#""ready""#) }))
        let port = try #require(ready["port"]?.numberValue?.intValue)
        let fingerprint = try #require(ready["certFingerprint"]?.stringValue)
        let address = ["--address", "127.0.0.1:\(port)", "--fingerprint", fingerprint]
        let common = ["pair", "--pin"] + address + ["--name", "Dad's laptop", "--data-dir", listenerData.path]

        let malformed = try await Self.cribcall(common + ["--pin-code", "12ab"])
        #expect(malformed.status == 64 && malformed.stderrText.contains("--pin-code is the 6 digits"))
        #expect(!monitor.output.contains { $0.contains(#""event":"pin""#) }, "no PIN session was opened for it")

        let wrong = try await Self.cribcall(common + ["--pin-code", "000000"])
        let shown = Self.object(await monitor.line { $0.contains(#""event":"pin""#) })
        let pin = try #require(shown?["pin"]?.stringValue)
        try #require(pin != "000000", "the monitor drew the very PIN this test guessed wrong (1 in a million)")
        #expect(wrong.status == 1, "\(wrong.stdoutText)\(wrong.stderrText)")
        #expect(wrong.stderrText.contains("wrong PIN (000000): 2 attempts left"), "\(wrong.stderrText)")
        #expect(shown?["attemptsRemaining"]?.numberValue?.intValue == 3)
        let again = await monitor.line { line in
            Self.object(line).map {
                $0["event"]?.stringValue == "pin" && $0["attemptsRemaining"]?.numberValue?.intValue == 2
            } ?? false
        }
        #expect(again != nil, "the monitor shows the tries left: \(monitor.output)")
        #expect(monitor.output.contains { $0.contains(#""reason":"INVALID_PIN""#) }, "\(monitor.output)")

        // Typed on the terminal: a wrong PIN, then the right one (the PIN of this new session).
        func pinEvents() -> [JSONValue] {
            monitor.output.compactMap(Self.object).filter { $0["event"]?.stringValue == "pin" }
        }
        let before = pinEvents().count
        let typed = try BackgroundProcess(
            try Subprocess.builtProduct("cribcall"), common, acceptsInput: true)
        defer { Task { await typed.stop() } }
        let next = try await awaitValue("the new session's PIN", timeout: .seconds(20)) {
            pinEvents().count > before ? pinEvents()[before]["pin"]?.stringValue : nil
        }
        typed.send((next == "111111" ? "222222" : "111111") + "\n")
        try await eventually("the monitor counts the wrong PIN") {
            pinEvents().count > before + 1 && pinEvents()[before + 1]["attemptsRemaining"]?.numberValue?.intValue == 2
        }
        typed.send(next + "\n")
        #expect(await typed.waitForExit(timeout: .seconds(30)) == 0, "\(typed.output) \(typed.errorOutput)")
        let said = typed.output.joined(separator: "\n")
        #expect(
            said.contains("Wrong PIN. Enter the PIN shown on the monitor again (2 attempts left): ")
                && said.contains("Paired with"), "\(said)")
    }

    /// A stranger who opens PIN sessions and leaves them unused must wait before opening more, from its address
    /// only: the parent at another address pairs at once. (The monitor once saw every device as one address,
    /// "IPv6", so the stranger made everyone wait.) On the defaults: the monitor on `::`, the stranger on ::1, the
    /// parent on 127.0.0.1, each a real `cribcall pair --pin`.
    @Test("a stranger's unused PIN sessions make only the stranger's address wait; the parent pairs at once")
    func strangerWaitsAlone() async throws {
        let monitorData = try Subprocess.temporaryDirectory("cribcall-wait-monitor")
        let strangerData = try Subprocess.temporaryDirectory("cribcall-wait-stranger")
        let parentData = try Subprocess.temporaryDirectory("cribcall-wait-parent")
        defer {
            for directory in [monitorData, strangerData, parentData] {
                try? FileManager.default.removeItem(at: directory)
            }
        }
        let monitor = try BackgroundProcess(
            try Subprocess.builtProduct("cribcall"),
            [
                "monitor", "--json", "--port", "0", "--no-discovery", "--audio-source", "test:silence",
                "--data-dir", monitorData.path,
            ])
        defer { Task { await monitor.stop() } }
        let ready = try #require(Self.object(try await monitor.ready("cribcall monitor") { $0.contains(#""ready""#) }))
        let port = try #require(ready["port"]?.numberValue?.intValue)
        let fingerprint = try #require(ready["certFingerprint"]?.stringValue)
        func pair(from address: String, _ data: URL) -> [String] {
            ["pair", "--pin", "--address", address, "--fingerprint", fingerprint, "--data-dir", data.path]
        }
        // The stranger opens sessions and types nothing (its input ends) until it is told to wait.
        var told: String?
        for _ in 0..<(2 + 2) where told == nil {
            let stranger = try await Self.cribcall(pair(from: "[::1]:\(port)", strangerData))
            #expect(stranger.status != 0)
            // (The listener words the monitor's CONFLICT as "busy pairing another device; try again in a minute".)
            if stranger.stderrText.contains("try again") { told = stranger.stderrText }
        }
        #expect(told != nil, "the stranger was never told to wait: \(monitor.output.suffix(6))")

        let before = monitor.output.filter { $0.contains(#""event":"pin""#) }.count
        let parent = try BackgroundProcess(
            try Subprocess.builtProduct("cribcall"), pair(from: "127.0.0.1:\(port)", parentData), acceptsInput: true)
        defer { Task { await parent.stop() } }
        let pin = try await awaitValue("the parent's PIN on the monitor", timeout: .seconds(20)) {
            let shown = monitor.output.filter { $0.contains(#""event":"pin""#) }
            return shown.count > before ? Self.object(shown[before])?["pin"]?.stringValue : nil
        }
        parent.send(pin + "\n")
        #expect(await parent.waitForExit(timeout: .seconds(30)) == 0, "\(parent.output) \(parent.errorOutput)")
        #expect(parent.output.joined().contains("Paired with"), "\(parent.output) \(parent.errorOutput)")
    }

    @Test("pairing with a monitor by name where no Avahi daemon runs says so at once, not that nothing answered")
    func noAvahi() async throws {
        guard MDNSNetwork.available(for: "ExitAndPairingWordsTests.noAvahi") else { return }
        let listenerData = try Subprocess.temporaryDirectory("cribcall-noavahi")
        defer { try? FileManager.default.removeItem(at: listenerData) }
        try await MDNSNetwork.with(busIn: ["a"], avahiIn: []) { network in
            let pair = try await network.run(
                network.a, try Subprocess.builtProduct("cribcall"),
                ["pair", "--pin", "--monitor", "Nursery", "--pin-code", "123456", "--data-dir", listenerData.path])
            #expect(pair.status == 1, "\(pair.stdoutText)\(pair.stderrText)")
            #expect(
                pair.stderrText.contains("systemctl start avahi-daemon") && pair.stderrText.contains("--address"),
                "\(pair.stderrText)")
            #expect(!pair.stderrText.contains("did not answer"), "the real cause, not a timeout: \(pair.stderrText)")
        }
    }
}
