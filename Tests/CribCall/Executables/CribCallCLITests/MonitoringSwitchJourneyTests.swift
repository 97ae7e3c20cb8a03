import Foundation
import TestSupport
import Testing

/// Monitoring ON/OFF (seed 000 §3.2) through the built executables, on their defaults: a monitor whose room cries
/// every 10 s (`test:cry`, well over the default threshold), a paired listener, and `cribcall settings set
/// monitoring=off|on` typed in a second terminal, as a parent would.
@Suite("cribcall settings set monitoring=off|on", .heavy(cores: 0.5, "a monitor and a listener for a minute"))
struct MonitoringSwitchJourneyTests {
    func cribcall(_ arguments: [String]) async throws -> Subprocess.Result {
        try await Subprocess.run(try Subprocess.builtProduct("cribcall"), arguments)
    }

    static func isNoise(_ line: String) -> Bool {
        line.contains(#""event":"noise""#) && line.contains(#""replayed":false"#)
    }

    @Test(
        "switched off: the listener says so at once, a crying room raises nothing, a listener started meanwhile is told; on: the next cry arrives"
    )
    func offAndOnAgain() async throws {
        let nursery = try Subprocess.temporaryDirectory("cribcall-switch-monitor")
        let parent = try Subprocess.temporaryDirectory("cribcall-switch-listener")
        defer { for directory in [nursery, parent] { try? FileManager.default.removeItem(at: directory) } }
        let monitor = try await PairingMonitor.start(
            data: nursery, ["--name", "Nursery", "--audio-source", "test:cry"])
        let paired = try await monitor.pair(listener: parent)
        #expect(paired.status == 0, "\(paired.stderrText)")
        let listen = ["listen", "--json", "--no-notify", "--data-dir", parent.path]
        var listener = try BackgroundProcess(try Subprocess.builtProduct("cribcall"), listen)
        defer { Task { [listener] in _ = await listener.stop() } }
        // The room is loud enough: a noise reaches the listener before anything is switched.
        #expect(await listener.line(timeout: .seconds(30), where: Self.isNoise) != nil, "\(listener.output)")
        #expect(listener.output.contains { $0.contains(#""event":"monitoring""#) && $0.contains(#""on""#) })

        let off = try await cribcall(["settings", "set", "monitoring=off", "--data-dir", nursery.path])
        #expect(off.status == 0 && off.stdoutText.hasPrefix("monitoring:       off"), "\(off.stderrText)")
        let told = await listener.line(timeout: .seconds(5)) {
            $0.contains(#""event":"monitoring""#) && $0.contains(#""monitoring":"off""#)
        }
        #expect(told?.contains(#""changed":true"#) == true, "\(listener.output.suffix(5))")
        #expect(
            await monitor.process.line(timeout: .seconds(5)) {
                $0.contains(#""event":"monitoring""#) && $0.contains(#""monitoring":"off""#)
            } != nil)
        // Two and more cries (every 10 s) while off: no noise event, at the monitor or the listener.
        let noisesBefore = listener.output.filter(Self.isNoise).count
        let monitorNoisesBefore = monitor.process.output.filter { $0.contains(#""event":"noise""#) }.count
        try await Task.sleep(for: .seconds(25))
        #expect(listener.output.filter(Self.isNoise).count == noisesBefore, "\(listener.output.suffix(5))")
        #expect(monitor.process.output.filter { $0.contains(#""event":"noise""#) }.count == monitorNoisesBefore)

        // A listener that starts while monitoring is off says so, in words, at once.
        _ = await listener.stop()
        let text = try BackgroundProcess(
            try Subprocess.builtProduct("cribcall"), ["listen", "--no-notify", "--data-dir", parent.path])
        let warned = await text.line(timeout: .seconds(15)) { $0.contains("Monitoring is OFF at \"Nursery\"") }
        #expect(warned?.contains("no alert can come from it until someone starts monitoring there") == true)
        _ = await text.stop()

        listener = try BackgroundProcess(try Subprocess.builtProduct("cribcall"), listen)
        #expect(
            await listener.line(timeout: .seconds(15)) { $0.contains(#""monitoring":"off""#) } != nil,
            "\(listener.output)")
        let on = try await cribcall(["settings", "set", "monitoring=on", "--data-dir", nursery.path])
        #expect(on.status == 0, "\(on.stderrText)")
        let back = await listener.line(timeout: .seconds(5)) {
            $0.contains(#""event":"monitoring""#) && $0.contains(#""monitoring":"on""#)
        }
        #expect(back?.contains(#""changed":true"#) == true, "\(listener.output.suffix(5))")
        #expect(await listener.line(timeout: .seconds(20), where: Self.isNoise) != nil, "the next cry arrives")
        // Both stop cleanly on SIGTERM (a loaded machine may take a few seconds to tear a monitor down).
        #expect(await listener.stop(grace: .seconds(10)) == 0, "\(listener.errorOutput.suffix(800))")
        #expect(await monitor.process.stop(grace: .seconds(10)) == 0, "\(monitor.process.errorOutput.suffix(800))")
    }
}
