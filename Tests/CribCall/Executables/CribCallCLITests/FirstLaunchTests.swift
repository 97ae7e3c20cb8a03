import CanonicalJSON
import Foundation
import TestSupport
import Testing

/// A monitor's first launch in the app (issue 32, item 7): nothing is raised before the parent has accepted the
/// disclaimer and finished setup, however much the nursery cries; from then on, the same sounds raise alerts.
@Suite(
    "A monitor's first launch raises nothing until its setup is done",
    .heavy(cores: 1, "a monitor watching its test pattern and hearing its cry-like test sound"))
struct FirstLaunchTests {
    @Test("crying on a fresh monitor with the app: no alert until setup is finished, then the crying alert")
    func noAlertBeforeSetup() async throws {
        let directory = try Subprocess.temporaryDirectory("cribcall-first-launch")
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = ["--data-dir", directory.path]
        let monitor = try BackgroundProcess(
            try Subprocess.builtProduct("cribcall"),
            [
                "monitor", "--name", "Nursery", "--safety", "--video-source", "test", "--audio-source", "test:cry",
                "--port", "0", "--json", "--no-discovery", "--web", "0",
            ] + data)
        defer { Task { _ = await monitor.stop() } }
        try await monitor.ready("cribcall monitor") { $0.contains(#""event":"ready""#) }
        let url = try await WebAppBrowserTests.webURL(of: monitor)
        // Three bursts of the cry-like sound (one every 10 s): the sound is heard (noise events), nothing is raised.
        let heard = await monitor.line(timeout: .seconds(40)) { line in
            line.contains(#""event":"noise""#) && monitor.output.filter { $0.contains(#""event":"noise""#) }.count >= 3
        }
        #expect(heard != nil, "the monitor heard no noise: \(monitor.output.suffix(10))")
        #expect(!monitor.output.contains { $0.contains(#""event":"safety_alert""#) }, "\(monitor.output.suffix(10))")
        let state = try await LoopbackHTTP.get(url + "api/state")
        let alerts = try JSONParser().parse(Array(state.text.utf8))["alerts"]?.arrayValue
        #expect(alerts?.isEmpty == true, "\(state.text.prefix(600))")
        let refused = try await Subprocess.run(
            try Subprocess.builtProduct("cribcall"), ["alert", "trigger", "crying"] + data)
        #expect(
            refused.status != 0 && refused.stderrText.contains("setup is finished in the app"), "\(refused.stderrText)")

        // The parent accepts the disclaimer and finishes setup in the app: the next burst is an alert.
        let done = try await LoopbackHTTP.post(
            url + "api/app", #"{"disclaimerAccepted": true, "babyName": "Liam", "setupComplete": true}"#)
        #expect(done.status == 200, "\(done.text)")
        let crying = await monitor.line(timeout: .seconds(40)) {
            $0.contains(#""event":"safety_alert""#) && $0.contains(#""kind":"crying""#)
        }
        #expect(crying != nil, "no crying alert after setup: \(monitor.output.suffix(10))")
    }
}
