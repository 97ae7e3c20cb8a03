import CribCallProtocol
import SafetyDetection
import Testing

@Suite("The final setup check: four real checks, 100 % only when all passed")
struct SetupCheckTests {
    /// Runs a check to its end, fed `status` and `level` every 250 ms.
    static func run(
        _ monitoring: MonitoringState?, reason: String? = nil, level: Int? = 20, threshold: Int = 60
    ) -> (progress: Int, done: Bool, ok: Bool, results: [SetupCheck.Result]) {
        var check = SetupCheck(startingAt: .zero, soundThreshold: threshold)
        var now = Duration.zero
        while now <= SetupCheck.duration {
            check.observe(monitoring: monitoring, reason: reason)
            if let level { check.hear(level: level) }
            now += .milliseconds(250)
        }
        return check.report(at: now)
    }

    static func states(_ results: [SetupCheck.Result]) -> [String] {
        results.map(\.state.rawValue)
    }

    @Test("a camera that sends judgeable pictures of a quiet room passes everything")
    func allPass() {
        let report = Self.run(.active)
        #expect(report.progress == 100 && report.done && report.ok)
        #expect(Self.states(report.results) == ["passed", "passed", "passed", "passed"])
        #expect(report.results.map(\.item) == [.camera, .light, .placement, .noise])
    }

    @Test("an audio-only monitor checks the room's noise only: a quiet room passes, a loud one does not")
    func audioOnly() {
        for (level, ok) in [(20, true), (75, false)] {
            var check = SetupCheck(startingAt: .zero, soundThreshold: 60, items: [.noise])
            var now = Duration.zero
            while now <= SetupCheck.duration {
                check.observe(monitoring: nil, reason: nil)
                check.hear(level: level)
                now += .milliseconds(250)
            }
            let report = check.report(at: now)
            #expect(report.results.map(\.item) == [.noise] && report.done && report.ok == ok, "level \(level)")
        }
    }

    @Test("progress runs with time; each check is pending, then checking, then decided; never 100 before the end")
    func progress() {
        var check = SetupCheck(startingAt: .seconds(10), soundThreshold: 60)
        check.observe(monitoring: .active, reason: nil)
        check.hear(level: 10)
        let start = check.report(at: .seconds(10))
        #expect(start.progress == 0 && !start.done && !start.ok)
        #expect(Self.states(start.results) == ["checking", "pending", "pending", "pending"])
        let half = check.report(at: .seconds(12))
        #expect(half.progress == 50)
        #expect(Self.states(half.results) == ["passed", "passed", "checking", "pending"])
        let almost = check.report(at: .seconds(10) + SetupCheck.duration - .milliseconds(1))
        #expect(almost.progress == 99 && !almost.ok)
        #expect(check.report(at: .seconds(10) + SetupCheck.duration).ok)
    }

    @Test("what fails says what to change")
    func failures() {
        let dark = Self.run(.stale, reason: SafetyMonitor.Reason.tooDark)
        #expect(!dark.ok && Self.states(dark.results) == ["passed", "failed", "failed", "passed"])
        #expect(dark.results[1].detail.contains("night light"))

        let bright = Self.run(.stale, reason: SafetyMonitor.Reason.tooBright)
        #expect(bright.results[1].detail.contains("windows and lamps"))

        let empty = Self.run(.stale, reason: SafetyMonitor.Reason.emptyArea)
        #expect(Self.states(empty.results) == ["passed", "passed", "failed", "passed"])
        #expect(empty.results[2].detail.contains("redraw the area"))

        let unplugged = Self.run(.paused, reason: SafetyMonitor.Reason.cameraDisconnected)
        #expect(Self.states(unplugged.results) == ["failed", "failed", "failed", "passed"])
        #expect(unplugged.results[0].detail.contains("camera disconnected"))

        let noCamera = Self.run(nil)
        #expect(noCamera.results[0].detail.contains("--safety"))

        let loud = Self.run(.active, level: 75)
        #expect(Self.states(loud.results) == ["passed", "passed", "passed", "failed"])
        #expect(loud.results[3].detail.contains("level 75; sound alerts start at 60"))

        let deaf = Self.run(.active, level: nil)
        #expect(!deaf.ok && deaf.results[3].detail == "No sound from the microphone yet.")
    }
}
