// Toukan benchmark (release build; run from the repository root, or `make bench`):
//   swift build -c release --product toukan --product toukan-server --product toukan-benchmark
//   .build/release/toukan-benchmark [--size-mb 60] [--uploads 10] [--rounds 3] [--record-seconds 60] [--stops 5]
// Everything runs on this machine, against release builds, in one run, so the ratios compare like with like:
// 1. upload throughput to one `toukan-server` (processing off: --workers 0, so the figure is the transfer): our
//    client (ToukanUploader) by POST /upload and by tus 1.0 with the daemon's settings (4 MiB PATCHes, SHA-1
//    checksums), against curl -F file=@… to the same server; median of `rounds` each, taken in turns;
// 2. the server's resident memory during `uploads` concurrent uploads of `size-mb` MB (curl), sampled every
//    20 ms, and during as many uploads of a tenth of the size: flat means the two peaks are about equal;
// 3. recorder CPU per hour of audio: the `toukan` daemon recording test:tone (GStreamer, AAC-LC 64 kbps, 500 ms
//    fragments written O_SYNC), against the bare encoding pipeline in gst-launch-1.0 measured the same way;
// 4. `toukan stop` → the upload's 201, seen by a relay between the daemon and the server: `stops` recordings of
//    3 s each; the part taken by `toukan stop` itself (the file finalised and saved) is shown separately.
// The clients share the 2 cores with the server, so the figures are lower bounds for a server alone.
import BenchmarkSupport
import Foundation
import ToukanCore
import ToukanUploader

func option(_ name: String, _ fallback: Int) -> Int {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: "--\(name)"), index + 1 < arguments.count else { return fallback }
    return Int(arguments[index + 1]) ?? fallback
}

let megabytes = option("size-mb", 60)
let concurrentUploads = option("uploads", 10)
let rounds = max(1, option("rounds", 3))
let recordSeconds = max(5, option("record-seconds", 60))
let stops = max(1, option("stops", 5))

let workspace = FileManager.default.temporaryDirectory.appendingPathComponent(
    "toukan-benchmark-\(ProcessInfo.processInfo.processIdentifier)")
benchmarkStep("creating \(workspace.path)") {
    try FileManager.default.createDirectory(at: workspace, withIntermediateDirectories: true)
}
defer { try? FileManager.default.removeItem(at: workspace) }

func mebibytesPerSecond(_ bytes: Int, _ seconds: Double) -> Double { Double(bytes) / 1_048_576 / seconds }
func mib(_ bytes: Int) -> String { String(format: "%.1f MiB", Double(bytes) / 1_048_576) }

// MARK: 1. Throughput, ours against curl

let big = benchmarkStep("writing the \(megabytes) MB upload") {
    try UploadFixture.write(bytes: megabytes * 1_000_000, to: workspace.appendingPathComponent("big.m4a"))
}
let serverData = workspace.appendingPathComponent("server")
let server = await benchmarkStep("starting toukan-server") {
    try await ServerUnderTest(
        product: "toukan-server",
        arguments: ["--host", "127.0.0.1", "--port", "0", "--json", "--workers", "0", "--data-dir", serverData.path])
}
let serverURL = URL(string: server.httpURL)!
let multipartClient = ToukanUploader(configuration: .init(server: serverURL, tusThreshold: .max))
let tusClient = ToukanUploader(configuration: .init(server: serverURL))

func ours(_ client: ToukanUploader) async throws -> Double {
    let recording = UploadFixture.recording(for: big.url)
    let started = ContinuousClock.now
    let outcome = await client.upload(recording, file: big.url) { _ in }
    guard case .uploaded = outcome else { throw BenchmarkFailure(description: "our upload failed: \(outcome)") }
    return milliseconds(ContinuousClock.now - started) / 1000
}

/// The three ways, in turns, so a slow moment of the machine does not fall on one way only.
let ways: [(name: String, label: String, upload: () async throws -> Double)] = [
    ("curl", "curl -F (POST /upload)", { try await curlUpload(big.url, to: server.httpURL) }),
    ("multipart", "toukan POST /upload", { try await ours(multipartClient) }),
    ("tus", "toukan tus 1.0 (4 MiB, SHA-1)", { try await ours(tusClient) }),
]
var seconds: [String: [Double]] = [:]
for _ in 0..<rounds {
    for way in ways {
        seconds[way.name, default: []].append(await benchmarkStep("upload by \(way.label)") { try await way.upload() })
    }
}
try? await multipartClient.shutdown()
try? await tusClient.shutdown()
let rate = seconds.mapValues { mebibytesPerSecond(big.bytes, percentile($0, 0.5)) }
say("Upload of \(megabytes) MB to toukan-server on loopback (median of \(rounds)):")
for way in ways {
    let figure = rate[way.name] ?? .nan
    let ratio = way.name == "curl" ? "" : String(format: "  = %.2f × curl", figure / (rate["curl"] ?? .nan))
    say(
        "  " + way.label.padding(toLength: 32, withPad: " ", startingAt: 0) + String(format: "%7.1f MiB/s", figure)
            + ratio)
}
server.stop()

// MARK: 2. Server memory under concurrent uploads

/// Peak and at-rest RSS of a fresh server while `count` curls upload `file` at once.
func memoryDuring(_ count: Int, uploadsOf file: URL, name: String) async -> (rest: Int, peak: Int, seconds: Double) {
    let data = workspace.appendingPathComponent("server-\(name)")
    let server = await benchmarkStep("starting toukan-server") {
        try await ServerUnderTest(
            product: "toukan-server",
            arguments: ["--host", "127.0.0.1", "--port", "0", "--json", "--workers", "0", "--data-dir", data.path])
    }
    defer {
        server.stop()
        try? FileManager.default.removeItem(at: data)
    }
    try? await Task.sleep(for: .milliseconds(500))
    let rest = residentBytes(of: server.pid)
    let sampler = Task {
        var peak = 0
        while !Task.isCancelled {
            peak = max(peak, residentBytes(of: server.pid))
            try? await Task.sleep(for: .milliseconds(20))
        }
        return peak
    }
    let started = ContinuousClock.now
    await benchmarkStep("\(count) concurrent curl uploads") {
        try await withThrowingTaskGroup(of: Double.self) { group in
            for _ in 0..<count { group.addTask { try await curlUpload(file, to: server.httpURL) } }
            try await group.waitForAll()
        }
    }
    let elapsed = milliseconds(ContinuousClock.now - started) / 1000
    sampler.cancel()
    return (rest, max(await sampler.value, residentBytes(of: server.pid)), elapsed)
}

let small = benchmarkStep("writing the small upload") {
    try UploadFixture.write(bytes: megabytes * 100_000, to: workspace.appendingPathComponent("small.m4a"))
}
let bigRun = await memoryDuring(concurrentUploads, uploadsOf: big.url, name: "big")
let smallRun = await memoryDuring(concurrentUploads, uploadsOf: small.url, name: "small")
say("toukan-server resident memory, \(concurrentUploads) concurrent uploads (curl -F, sampled every 20 ms):")
say(
    "  \(concurrentUploads) × \(megabytes) MB: at rest \(mib(bigRun.rest)), peak \(mib(bigRun.peak)) "
        + String(format: "(%.0f MiB/s in all)", mebibytesPerSecond(big.bytes * concurrentUploads, bigRun.seconds)))
say("  \(concurrentUploads) × \(Double(megabytes) / 10) MB: at rest \(mib(smallRun.rest)), peak \(mib(smallRun.peak))")
say(
    String(
        format: "  peak growth: %@ for %.0f× the bytes (%.2f× the smaller run's peak)",
        mib(bigRun.peak - bigRun.rest), Double(big.bytes) / Double(small.bytes),
        Double(bigRun.peak) / Double(max(1, smallRun.peak))))
try? FileManager.default.removeItem(at: big.url)

// MARK: 3. Recorder CPU per hour of audio

let toukan = ToukanCommand(dataDirectory: workspace.appendingPathComponent("client").path)
endDaemonAtExit()
let (daemonCPU, bytesPerHour) = await benchmarkStep("recording \(recordSeconds) s with the toukan daemon") {
    try await toukan("start", "--audio-source", "test:tone")
    let first = try await toukan.waitRecorded(2)
    guard let pid = first["pid"] as? Int, let file = first["file"] as? String else {
        throw BenchmarkFailure(description: "toukan status --json gave no pid or file: \(first)")
    }
    let cpu0 = cpuSeconds(of: pid_t(pid)) ?? 0
    let audio0 = first["elapsedSeconds"] as? Double ?? 0
    let last = try await toukan.waitRecorded(audio0 + Double(recordSeconds), timeout: .seconds(recordSeconds * 3))
    let cpu1 = cpuSeconds(of: pid_t(pid)) ?? 0
    let audio1 = last["elapsedSeconds"] as? Double ?? 0
    let stopped = try await toukan("stop", "--json")
    let saved = (try? JSONSerialization.jsonObject(with: Data(stopped.output.utf8)) as? [String: Any]) ?? [:]
    let path = (saved["file"] as? String) ?? file
    let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    let duration = saved["duration"] as? Double ?? audio1
    return ((cpu1 - cpu0) / (audio1 - audio0) * 3600, Double(size) / duration * 3600)
}

/// CPU per hour of the same encoding in gst-launch-1.0 (an independent program: Debian's gstreamer1.0-tools).
func gstLaunchCPUPerHour(seconds: Int) async -> Double? {
    guard let gstLaunch = onPath("gst-launch-1.0") else { return nil }
    let output = workspace.appendingPathComponent("gst-launch.m4a")
    let process = Process()
    process.executableURL = gstLaunch
    process.arguments =
        "-q audiotestsrc is-live=true freq=440 volume=0.25 ! audio/x-raw,rate=44100,channels=1 ! avenc_aac bitrate=64000 ! mp4mux fragment-duration=500 ! filesink o-sync=true buffer-mode=unbuffered"
        .split(separator: " ").map(String.init) + ["location=\(output.path)"]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    guard (try? process.run()) != nil else { return nil }
    try? await Task.sleep(for: .seconds(2))
    let cpu0 = cpuSeconds(of: process.processIdentifier)
    let started = ContinuousClock.now
    try? await Task.sleep(for: .seconds(seconds))
    let cpu1 = cpuSeconds(of: process.processIdentifier)
    let elapsed = milliseconds(ContinuousClock.now - started) / 1000
    end(process, grace: .seconds(2))
    guard let cpu0, let cpu1 else { return nil }
    return (cpu1 - cpu0) / elapsed * 3600
}

let peerCPU = await gstLaunchCPUPerHour(seconds: recordSeconds)
say("Recorder CPU per hour of audio (\(recordSeconds) s recorded, test:tone):")
say(
    String(
        format: "  toukan daemon: %.0f CPU s per hour (%.2f %% of one core), %.1f MB per hour", daemonCPU,
        daemonCPU / 36, bytesPerHour / 1e6))
if let peerCPU {
    say(
        String(
            format: "  gst-launch-1.0, the same encoding alone: %.0f CPU s per hour (daemon = %.2f × gst-launch)",
            peerCPU, daemonCPU / peerCPU))
} else {
    say("  gst-launch-1.0 not found: no peer figure (apt-get install gstreamer1.0-tools)")
}

// MARK: 4. toukan stop → 201

let stopServer = await benchmarkStep("starting toukan-server") {
    try await ServerUnderTest(
        product: "toukan-server",
        arguments: [
            "--host", "127.0.0.1", "--port", "0", "--json", "--workers", "0", "--data-dir",
            workspace.appendingPathComponent("server-stop").path,
        ])
}
let watch = ResponseWatch(target: stopServer.port)
let relayPort = await benchmarkStep("starting the relay") { try await watch.start() }
var toCreated: [Double] = []
var toSaved: [Double] = []
for index in 0..<stops {
    await benchmarkStep("recording \(index + 1) of \(stops)") {
        if index == 0 {
            try await toukan("start", "--audio-source", "test:tone", "--server", "http://127.0.0.1:\(relayPort)")
        } else {
            try await toukan("start", "--audio-source", "test:tone")
        }
        _ = try await toukan.waitRecorded(3)
        let before = watch.created.count
        let stopAt = monotonicNanoseconds()
        try await toukan("stop")
        let savedAt = monotonicNanoseconds()
        let deadline = ContinuousClock.now + .seconds(30)
        while watch.created.count == before {
            guard ContinuousClock.now < deadline else {
                throw BenchmarkFailure(description: "no 201 within 30 s of toukan stop (see the daemon.log)")
            }
            try await Task.sleep(for: .milliseconds(1))
        }
        toCreated.append(Double(watch.created[before] - stopAt) / 1e6)
        toSaved.append(Double(savedAt - stopAt) / 1e6)
    }
}
await toukan.endDaemon()
await watch.stop()
stopServer.stop()
say("toukan stop → the upload's 201 (\(stops) recordings of 3 s, uploaded through a relay that sees the answer):")
say(
    String(
        format: "  p50 %.0f ms, max %.0f ms; of which toukan stop itself (file finalised, saved): p50 %.0f ms",
        percentile(toCreated, 0.5), toCreated.max() ?? .nan, percentile(toSaved, 0.5)))
