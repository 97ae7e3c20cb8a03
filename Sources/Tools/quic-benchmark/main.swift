// QUIC control-channel benchmark: handshake latency and frame throughput on loopback, Swift↔Swift and
// aioquic↔aioquic measured in the same run, plus the aioquic client against the Swift monitor.
// Run from the repository root after `make test` (it needs .venv with aioquic):
//   swift build -c release --product quic-benchmark && .build/release/quic-benchmark
import BenchmarkSupport
import ControlTransport
import CribCallControl
import CribCallProtocol
import DeviceIdentity
import Foundation
import QUIC

let arguments = CommandLine.arguments
func option(_ name: String, _ fallback: Int) -> Int {
    arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? Int(arguments[$0 + 1]) : nil }
        ?? fallback
}
let connections = option("--connections", 200)
let frames = option("--frames", 5000)
let python = arguments.firstIndex(of: "--python").map { arguments[$0 + 1] } ?? ".venv/bin/python"
let peerScript = "Tests/Interop/quic/cribcall_peer.py"

struct Figures: Codable {
    var handshakeP50Ms: Double
    var handshakeP99Ms: Double
    var framesPerSecond: Double
    var pipelinedFramesPerSecond: Double
}

/// A Swift monitor that trusts `client` and answers PING with PONG through the real ControlSession.
func startMonitor(identity: DeviceIdentity, trusting client: CertificateFingerprint) async throws -> QUICListener {
    let listener = try await QUICListener.bind(host: "127.0.0.1", port: 0, identity: identity)
    let accepted = listener.connections
    Task {
        await withDiscardingTaskGroup { group in
            for await connection in accepted {
                group.addTask {
                    let session = ControlSession(connection: connection, role: .monitor) {
                        connection.peer.fingerprint == client ? .trusted : .untrusted
                    }
                    _ = await session.run { message in
                        if case .ping(let ping) = message { return [.send(.pong(ping))] }
                        return []
                    }
                }
            }
        }
    }
    return listener
}

func benchSwift(monitor: DeviceIdentity, client: DeviceIdentity) async throws -> Figures {
    let listener = try await startMonitor(identity: monitor, trusting: client.fingerprint)
    let connector = try QUICConnector(identity: client)
    let clock = ContinuousClock()
    // Warm up, then sequential full handshakes (mutual Ed25519 + pin check), each closed before the next.
    for _ in 0..<10 {
        let connection = try await connector.connect(
            host: "127.0.0.1", port: listener.port, pinnedFingerprint: monitor.fingerprint)
        await connection.close(code: 0)
    }
    var handshakes: [Double] = []
    for _ in 0..<connections {
        let start = clock.now
        let connection = try await connector.connect(
            host: "127.0.0.1", port: listener.port, pinnedFingerprint: monitor.fingerprint)
        handshakes.append(milliseconds(clock.now - start))
        await connection.close(code: 0)
    }
    let connection = try await connector.connect(
        host: "127.0.0.1", port: listener.port, pinnedFingerprint: monitor.fingerprint)
    var replies = connection.inbound.makeAsyncIterator()
    var start = clock.now
    for index in 0..<frames {
        try await connection.send(.ping(Ping(timestamp: Int64(index))))
        guard try await replies.next() != nil else { throw CancellationError() }
    }
    let sequential = Double(frames) / (milliseconds(clock.now - start) / 1000)
    start = clock.now
    async let sent: Void = {
        for index in 0..<frames { try await connection.send(.ping(Ping(timestamp: Int64(index)))) }
    }()
    for _ in 0..<frames {
        guard try await replies.next() != nil else { throw CancellationError() }
    }
    try await sent
    let pipelined = Double(frames) / (milliseconds(clock.now - start) / 1000)
    await connection.close(code: 0)
    await listener.shutdown()
    return Figures(
        handshakeP50Ms: percentile(handshakes, 0.5), handshakeP99Ms: percentile(handshakes, 0.99),
        framesPerSecond: sequential, pipelinedFramesPerSecond: pipelined)
}

/// Runs the aioquic bench and returns its final JSON figures.
func benchAioquic(extra: [String]) throws -> Figures {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: python)
    process.arguments =
        [peerScript, "bench", "--mode", "all", "--connections", "\(connections)", "--frames", "\(frames)"]
        + extra
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard
        let line = String(decoding: data, as: UTF8.self).split(separator: "\n").last(where: {
            $0.contains("\"benchmark\"")
        }),
        let figures = try? JSONDecoder().decode(Figures.self, from: Data(line.utf8))
    else {
        throw CocoaError(
            .fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: "aioquic bench printed no figures"])
    }
    return figures
}

func describe(_ name: String, _ figures: Figures) {
    print(
        String(
            format: "%@: handshake p50 %.2f ms, p99 %.2f ms; PING→PONG %.0f/s sequential, %.0f/s pipelined",
            name, figures.handshakeP50Ms, figures.handshakeP99Ms, figures.framesPerSecond,
            figures.pipelinedFramesPerSecond))
}

let (monitor, client) = benchmarkStep("creating identities") {
    (try DeviceIdentity.generate(now: Date()), try DeviceIdentity.generate(now: Date()))
}
print("QUIC control channel on 127.0.0.1: \(connections) handshakes, \(frames) frames per phase")
let swift = await benchmarkStep("Swift ↔ Swift") { try await benchSwift(monitor: monitor, client: client) }
describe("Swift  ↔ Swift  ", swift)

var results: [String: Figures] = ["swift": swift]
if FileManager.default.isExecutableFile(atPath: python) {
    let aioquic = benchmarkStep("aioquic ↔ aioquic") { try benchAioquic(extra: []) }
    describe("aioquic↔aioquic", aioquic)
    results["aioquic"] = aioquic
    // The same aioquic client against the Swift monitor isolates the server side.
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
        "quic-bench-\(UUID().uuidString.prefix(8))")
    benchmarkStep("creating \(directory.path)") {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }
    let gen = Process()
    gen.executableURL = URL(fileURLWithPath: python)
    gen.arguments = [peerScript, "gen-cert", "--out", directory.path]
    let genOutput = Pipe()
    gen.standardOutput = genOutput
    benchmarkStep("running cribcall_peer.py gen-cert") { try gen.run() }
    let genData = genOutput.fileHandleForReading.readDataToEndOfFile()
    gen.waitUntilExit()
    if let object = try? JSONSerialization.jsonObject(with: genData) as? [String: Any],
        let text = object["fingerprint"] as? String, let fingerprint = CertificateFingerprint(hex: text)
    {
        let listener = await benchmarkStep("starting the Swift monitor") {
            try await startMonitor(identity: monitor, trusting: fingerprint)
        }
        let mixed = benchmarkStep("aioquic → Swift") {
            try benchAioquic(extra: [
                "--target-host", "127.0.0.1", "--target-port", "\(listener.port)", "--pin", monitor.fingerprint.hex,
                "--cert", directory.appendingPathComponent("cert.pem").path,
                "--key", directory.appendingPathComponent("key.pem").path,
            ])
        }
        describe("aioquic→Swift  ", mixed)
        results["aioquicClientSwiftServer"] = mixed
        await listener.shutdown()
    }
    try? FileManager.default.removeItem(at: directory)
    print(
        String(
            format: "Swift/aioquic: handshake p50 %.1f× faster, sequential frames %.1f×, pipelined %.1f×",
            aioquic.handshakeP50Ms / swift.handshakeP50Ms, swift.framesPerSecond / aioquic.framesPerSecond,
            swift.pipelinedFramesPerSecond / aioquic.pipelinedFramesPerSecond))
} else {
    print("aioquic peer not found at \(python): run `make test` first to install it (Swift figures only)")
}
let encoder = JSONEncoder()
encoder.outputFormatting = .sortedKeys
if let json = try? encoder.encode(results) {
    print("{\"event\":\"benchmark\",\"name\":\"quic\",\"results\":\(String(decoding: json, as: UTF8.self))}")
}
