import Foundation
import TestSupport
import Testing

/// `cribcall monitor --safety` and `cribcall alert trigger`, through the built executable: the alert goes through
/// the running monitor's real path, is refused when it must be, and nothing but the database and keys is written.
@Suite("cribcall monitor --safety, cribcall alert trigger", .serialized, .heavy(cores: 0.5, "a monitor with a camera"))
struct SafetyCommandTests {
    func cribcall(_ arguments: [String]) async throws -> Subprocess.Result {
        try await Subprocess.run(try Subprocess.builtProduct("cribcall"), arguments)
    }

    /// `cribcall monitor --safety` on the test pattern with `data` (its data directory), once it says it is ready.
    static func safetyMonitor(_ data: [String]) async throws -> BackgroundProcess {
        let monitor = try BackgroundProcess(
            try Subprocess.builtProduct("cribcall"),
            [
                "monitor", "--safety", "--video-source", "test", "--audio-source", "test:silence", "--port", "0",
                "--json", "--no-discovery",
            ] + data)
        do {
            try await monitor.ready("cribcall monitor") { $0.contains(#""event":"ready""#) }
        } catch {
            _ = await monitor.stop()
            throw error
        }
        return monitor
    }

    @Test("a trigger raises the alert with evidence; an unknown kind is a usage error; safetyAlerts=off refuses it")
    func trigger() async throws {
        let directory = try Subprocess.temporaryDirectory("cribcall-safety")
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = ["--data-dir", directory.path]
        let nobody = try await cribcall(["alert", "trigger", "crying"] + data)
        #expect(nobody.status == 1 && nobody.stderrText.contains("no monitor runs with the data directory"))

        let monitor = try await Self.safetyMonitor(data)
        defer { Task { await monitor.stop() } }
        #expect(
            await monitor.line(timeout: .seconds(30)) {
                $0.contains(#""event":"safety_status""#) && $0.contains(#""monitoring":"active""#)
            } != nil, "the test pattern is judged: \(monitor.output.suffix(5))")

        let raised = try await cribcall(["alert", "trigger", "face_covered"] + data)
        #expect(raised.status == 0, "\(raised.stderrText)")
        #expect(raised.stdoutText.hasPrefix("Raised a high face_covered alert (#"), "\(raised.stdoutText)")
        let alert = await monitor.line { $0.contains(#""event":"safety_alert""#) }
        #expect(
            alert?.contains(#""kind":"face_covered""#) == true && alert?.contains(#""evidenceBytes":null"#) == false)

        let unknown = try await cribcall(["alert", "trigger", "sneezing"] + data)
        #expect(unknown.status == 64 && unknown.stderrText.contains("use one of face_covered, on_stomach"))

        #expect(try await cribcall(["settings", "set", "safetyAlerts=off"] + data).status == 0)
        try await eventually("the monitor to apply safetyAlerts=off") {
            try await cribcall(["alert", "trigger", "crying"] + data).stderrText
                .contains("not raised: safety alerts are turned off")
        }
        #expect(await monitor.stop() != nil)

        // Detection keeps no picture or sound: the data directory holds the keys and the database only.
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        let allowed: Set = [
            "cribcall.sqlite", "cribcall.sqlite-shm", "cribcall.sqlite-wal", "dtls.pem", "identity.pem",
        ]
        #expect(Set(files).isSubset(of: allowed), "\(files)")
    }

    @Test(
        "the test pattern's ball rolling in and out of the sleep area: monitoring changes at most once in a minute")
    func noFlapping() async throws {
        let directory = try Subprocess.temporaryDirectory("cribcall-flap")
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = ["--data-dir", directory.path]
        // The area the browser walk draws: the ball leaves it for about 3 s every 7 s.
        #expect(try await cribcall(["settings", "set", "sleepArea=0.2,0.1,0.6,0.8"] + data).status == 0)
        let monitor = try await Self.safetyMonitor(data)
        defer { Task { await monitor.stop() } }
        let active = await monitor.line(timeout: .seconds(30)) {
            $0.contains(#""event":"safety_status""#) && $0.contains(#""monitoring":"active""#)
        }
        #expect(active != nil, "the test pattern is judged: \(monitor.output.suffix(5))")
        try await Task.sleep(for: .seconds(60))
        _ = await monitor.stop()
        let states = monitor.output.compactMap { line -> String? in
            guard line.contains(#""event":"safety_status""#),
                let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            else { return nil }
            return object["monitoring"] as? String
        }
        // From the first judgement on (a loaded machine may report "waiting for the camera" first).
        let judged = states.drop { $0 != "active" }
        var changes: [String] = []
        for (before, after) in zip(judged, judged.dropFirst()) where before != after { changes.append(after) }
        #expect(changes.count <= 1, "monitoring went \(changes)")
    }
}
