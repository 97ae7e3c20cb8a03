import BenchmarkSupport
import Foundation
import Synchronization

/// A child process whose stdout lines are JSON objects, read on a thread of their own.
final class Child: Sendable {
    private let process: Process
    private let lines = Mutex<[Data]>([])
    let name: String

    init(_ name: String, _ executable: String, _ arguments: [String]) throws {
        self.name = name
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        try process.run()
        let handle = output.fileHandleForReading
        let thread = Thread { [self] in read(handle) }
        thread.start()
    }

    private func read(_ handle: FileHandle) {
        var pending = Data()
        while true {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            pending += chunk
            while let newline = pending.firstIndex(of: 0x0A) {
                let line = Data(pending[pending.startIndex..<newline])
                pending = Data(pending[(newline + 1)...])
                lines.withLock { $0.append(line) }
            }
        }
    }

    /// Every line so far with `"event": event`.
    func events(_ event: String) -> [[String: Any]] {
        lines.withLock { $0 }
            .compactMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
            .filter { $0["event"] as? String == event }
    }

    /// Waits for the first line with `"event": event`.
    func wait(for event: String, timeout: Duration) async throws -> [String: Any] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let line = events(event).first { return line }
            guard process.isRunning else { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw BenchmarkFailure(description: "\(name) did not report \(event) (running: \(process.isRunning))")
    }

    func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }
}

/// What one run of the two roles measured.
struct MouthToEar {
    /// Click capture → heard, in milliseconds, during the audio-only stream.
    var audio: [Double]
    /// The same during the audio+video stream.
    var audioVideo: [Double]
    var clicksDuringAudio: Int
    var monitorCPU: [String: Double]
    var listenerCPU: [String: Double]
}

/// Runs `monitor-role` and `listener-role` as two processes (each through `wrap`, e.g. `ip netns exec NS`) and
/// matches every heard click with the click that was captured last before it.
func runRoles(
    monitorHost: String,
    listenerHost: String,
    monitorWrap: [String] = [],
    listenerWrap: [String] = [],
    audioSeconds: Int = 20,
    videoSeconds: Int = 10
) async throws -> MouthToEar {
    let executable = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL.path
    func command(_ wrap: [String], _ arguments: [String]) -> (String, [String]) {
        wrap.isEmpty ? (executable, arguments) : (wrap[0], Array(wrap.dropFirst()) + [executable] + arguments)
    }
    let (monitorProgram, monitorArguments) = command(monitorWrap, ["monitor-role", "--host", monitorHost])
    let monitor = try Child("monitor", monitorProgram, monitorArguments)
    defer { monitor.stop() }
    let ready = try await monitor.wait(for: "ready", timeout: .seconds(20))
    guard let qr = ready["qr"] as? String else { throw BenchmarkFailure(description: "the monitor gave no QR text") }
    let (listenerProgram, listenerArguments) = command(
        listenerWrap,
        [
            "listener-role", "--qr", qr, "--monitor-host", monitorHost, "--host", listenerHost,
            "--audio-seconds", "\(audioSeconds)", "--video-seconds", "\(videoSeconds)",
        ])
    let listener = try Child("listener", listenerProgram, listenerArguments)
    defer { listener.stop() }
    _ = try await listener.wait(for: "done", timeout: .seconds(Int64(audioSeconds + videoSeconds + 60)))
    try await Task.sleep(for: .milliseconds(500))  // the monitor's stream_cpu of the last stream

    let clicks = monitor.events("click").compactMap { ($0["t"] as? NSNumber)?.int64Value }.sorted()
    var matched = Set<Int64>()
    var latencies: [String: [Double]] = [:]
    for onset in listener.events("onset") {
        guard let time = (onset["t"] as? NSNumber)?.int64Value, let phase = onset["mediaType"] as? String,
            let click = clicks.last(where: { $0 <= time }), !matched.contains(click)
        else { continue }
        let latency = Double(time - click) / 1e6
        guard latency < milliseconds(ClickTrack.period) else { continue }
        matched.insert(click)
        latencies[phase, default: []].append(latency)
    }
    func cpu(_ child: Child, _ event: String) -> [String: Double] {
        var result: [String: Double] = [:]
        for line in child.events(event) {
            if let type = line["mediaType"] as? String, let value = (line["cpuPercent"] as? NSNumber)?.doubleValue {
                result[type] = value
            }
        }
        return result
    }
    let periods = Double(audioSeconds) * 1000 / milliseconds(ClickTrack.period)
    return MouthToEar(
        audio: latencies["audio"] ?? [], audioVideo: latencies["audio_video"] ?? [],
        clicksDuringAudio: Int(periods), monitorCPU: cpu(monitor, "stream_cpu"),
        listenerCPU: cpu(listener, "listener_cpu")
    )
}

/// Two network namespaces joined by `scripts/bench/delay_line.py` (a userspace netem: this kernel has no
/// sch_netem), `delay` each way. Returns nil (and says why) when this machine cannot make them.
final class DelayedLAN: Sendable {
    static let namespaces = ("cc-bench-a", "cc-bench-b")
    static let addresses = ("10.79.0.1", "10.79.0.2")
    private let delayLine: Child

    static func make(delayMilliseconds: Int) -> DelayedLAN? {
        guard geteuid() == 0 else {
            say("across namespaces: skipped (needs root to create network namespaces)")
            return nil
        }
        let script = "scripts/bench/delay_line.py"
        guard FileManager.default.fileExists(atPath: script), FileManager.default.fileExists(atPath: "/dev/net/tun")
        else {
            say("across namespaces: skipped (run from the repository root; needs /dev/net/tun)")
            return nil
        }
        removeNamespaces()
        guard run("/usr/sbin/ip", ["netns", "add", namespaces.0]), run("/usr/sbin/ip", ["netns", "add", namespaces.1])
        else {
            say("across namespaces: skipped (`ip netns add` failed; install iproute2)")
            return nil
        }
        do {
            let line = try Child(
                "delay line", "/usr/bin/env",
                [
                    "python3", script, "--ns-a", namespaces.0, "--ns-b", namespaces.1, "--addr-a", addresses.0,
                    "--addr-b", addresses.1, "--delay-ms", "\(delayMilliseconds)",
                ])
            return DelayedLAN(delayLine: line)
        } catch {
            say("across namespaces: skipped (\(error))")
            removeNamespaces()
            return nil
        }
    }

    private init(delayLine: Child) {
        self.delayLine = delayLine
    }

    func ready() async throws {
        _ = try await delayLine.wait(for: "ready", timeout: .seconds(10))
    }

    func tearDown() {
        delayLine.stop()
        Self.removeNamespaces()
    }

    private static func removeNamespaces() {
        _ = run("/usr/sbin/ip", ["netns", "del", namespaces.0], quiet: true)
        _ = run("/usr/sbin/ip", ["netns", "del", namespaces.1], quiet: true)
    }

    @discardableResult
    private static func run(_ program: String, _ arguments: [String], quiet: Bool = false) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        if quiet { process.standardError = FileHandle.nullDevice }
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }
}
