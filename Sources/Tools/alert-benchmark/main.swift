// CribCall alert benchmark (release build; run from the repository root):
//   swift build -c release --product alert-benchmark && .build/release/alert-benchmark
// Real QUIC on 127.0.0.1 between a MonitorService and a ListenerService:
// - NOISE_EVENT latency: from the detector's decision (reportNoise) to the listener's receipt, p50/p99;
// - PIN and QR pairing time (connect, pinned handshake, CPace or token tag, confirmation, store);
// - monitor CPU while detecting in real time (percent of one core): on the in-process test:cry signal, and on
//   the same cry audio captured through GStreamer (a looping 48 kHz WAV file, decoded and resampled to 16 kHz).
import AudioCapture
import BenchmarkSupport
import ControlTransport
import CribCallListener
import CribCallMonitor
import CribCallProtocol
import CribCallStore
import DeviceIdentity
import Foundation
import QUIC
import SoundDetection

let clock = ContinuousClock()
let monitorIdentity = benchmarkStep("creating the monitor's identity") { try DeviceIdentity.generate(now: Date()) }
let quic = await benchmarkStep("listening on QUIC") {
    try await QUICListener.bind(host: "127.0.0.1", port: 0, identity: monitorIdentity)
}
let monitor = benchmarkStep("starting the monitor") {
    try MonitorService(identity: monitorIdentity, database: try CribCallDatabase.inMemory(), transport: quic)
}

final class PINBox: @unchecked Sendable {
    // Safe: written by one task (the monitor's event reader) and read after a lock-protected handoff.
    private let lock = NSLock()
    private var value: String?
    func set(_ pin: String) {
        lock.lock()
        value = pin
        lock.unlock()
    }
    func take() -> String? {
        lock.lock()
        defer {
            value = nil
            lock.unlock()
        }
        return value
    }
}
let pins = PINBox()
let serving = Task {
    async let served: Void = monitor.run()
    for await event in monitor.events { if case .pin(let pin, _, _, _) = event { pins.set(pin) } }
    await served
}

// Pairing times.
var pinTimes: [Double] = []
var qrTimes: [Double] = []
var listeners: [ListenerService] = []
for round in 0..<20 {
    let (listener, pinTime) = await benchmarkStep("PIN pairing (round \(round + 1))") {
        let identity = try DeviceIdentity.generate(now: Date())
        let listener = ListenerService(
            identity: identity, name: "bench \(round)", database: try CribCallDatabase.inMemory(),
            connector: try QUICConnector(identity: identity))
        let start = clock.now
        _ = try await listener.pairWithPIN(host: "127.0.0.1", port: quic.port, fingerprint: monitorIdentity.fingerprint)
        { _ in
            for _ in 0..<1000 {
                if let pin = pins.take() { return pin }
                try? await Task.sleep(for: .milliseconds(1))
            }
            return nil
        }
        return (listener, milliseconds(clock.now - start))
    }
    pinTimes.append(pinTime)
    let qrTime = await benchmarkStep("QR pairing (round \(round + 1))") {
        let qrIdentity = try DeviceIdentity.generate(now: Date())
        let qrListener = ListenerService(
            identity: qrIdentity, name: "qr \(round)", database: try CribCallDatabase.inMemory(),
            connector: try QUICConnector(identity: qrIdentity))
        let payload = await monitor.showQR(port: quic.port)
        let qrStart = clock.now
        _ = try await qrListener.pairWithQR(qrText: payload.qrText, host: "127.0.0.1")
        return milliseconds(clock.now - qrStart)
    }
    qrTimes.append(qrTime)
    if round == 0 { listeners.append(listener) }
}
print(
    String(
        format: "PIN pairing: p50 %.1f ms, p99 %.1f ms (connect + pinned handshake + CPace + confirmation + store)",
        percentile(pinTimes, 0.5), percentile(pinTimes, 0.99)))
print(String(format: "QR pairing:  p50 %.1f ms, p99 %.1f ms", percentile(qrTimes, 0.5), percentile(qrTimes, 0.99)))

// NOISE_EVENT latency: detector decision → listener receipt.
let listener = listeners[0]
let sentAt = LatencyLog()
final class LatencyLog: @unchecked Sendable {
    // Safe: every access holds `lock`.
    private let lock = NSLock()
    private var sent: [Int64: ContinuousClock.Instant] = [:]
    private var latencies: [Double] = []
    func sent(_ seq: Int64, at instant: ContinuousClock.Instant) {
        lock.lock()
        sent[seq] = instant
        lock.unlock()
    }
    func received(_ seq: Int64, at instant: ContinuousClock.Instant) {
        lock.lock()
        if let start = sent[seq] { latencies.append(milliseconds(instant - start)) }
        lock.unlock()
    }
    var all: [Double] {
        lock.lock()
        defer { lock.unlock() }
        return latencies
    }
}
let receiving = Task {
    for await event in await listener.listen() {
        if case .noise(_, _, let noise) = event, noise.replayed != true { sentAt.received(noise.seq, at: clock.now) }
    }
}
try? await Task.sleep(for: .milliseconds(300))  // connected and caught up
for _ in 0..<300 {
    let start = clock.now
    let event = await benchmarkStep("reporting a noise event") {
        try await monitor.reportNoise(NoiseDetection(offsetMs: 0, peakLevel: 80, durationMs: 600))
    }
    sentAt.sent(event.seq, at: start)
    try? await Task.sleep(for: .milliseconds(5))
}
try? await Task.sleep(for: .milliseconds(300))
receiving.cancel()
let latencies = sentAt.all
print(
    String(
        format: "NOISE_EVENT latency (decision → listener, %d events): p50 %.2f ms, p99 %.2f ms",
        latencies.count, percentile(latencies, 0.5), percentile(latencies, 0.99)))

/// The whole process's CPU while `input` feeds detection for 10 s, in percent of one core.
func detectionCPU(_ input: any AudioInput) async throws -> Double {
    let cpuStart = cpuSeconds()
    let wallStart = clock.now
    let detecting = Task {
        try await DetectionLoop.run(input: input, configuration: { .default }) { detection in
            _ = try? await monitor.reportNoise(detection)
        }
    }
    try await Task.sleep(for: .seconds(10))
    detecting.cancel()
    await input.stop()
    return (cpuSeconds() - cpuStart) / (milliseconds(clock.now - wallStart) / 1000) * 100
}

/// 20 s of test:cry at 48 kHz mono as a 16-bit WAV file (the signal upsampled by repetition: fine for CPU).
func cryWAV() throws -> URL {
    var source = TestAudioSource(.cry)
    var pcm = Data()
    for sample in source.next(16_000 * 20) {
        let value = Int16(max(-1, min(1, sample)) * 32767)
        for _ in 0..<3 { withUnsafeBytes(of: value.littleEndian) { pcm.append(contentsOf: $0) } }
    }
    func le<T: FixedWidthInteger>(_ value: T) -> Data { withUnsafeBytes(of: value.littleEndian) { Data($0) } }
    var wav = Data("RIFF".utf8) + le(UInt32(36 + pcm.count)) + Data("WAVEfmt ".utf8)
    wav += le(UInt32(16)) + le(UInt16(1)) + le(UInt16(1)) + le(UInt32(48_000)) + le(UInt32(96_000))
    wav += le(UInt16(2)) + le(UInt16(16)) + Data("data".utf8) + le(UInt32(pcm.count)) + pcm
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("alert-benchmark-cry-\(getpid()).wav")
    try wav.write(to: url)
    return url
}

let cpu = await benchmarkStep("detecting test:cry") { try await detectionCPU(TestSignalInput(.cry)) }
print(
    String(format: "Monitor CPU while detecting test:cry in real time: %.2f %% of one core (10 s, whole process)", cpu))
let wav = benchmarkStep("writing the cry WAV file") { try cryWAV() }
defer { try? FileManager.default.removeItem(at: wav) }
let captureCPU = await benchmarkStep("detecting GStreamer-captured audio") {
    try await detectionCPU(try GStreamerAudioCapture(source: .file(path: wav.path)))
}
print(
    String(
        format: "Monitor CPU while detecting GStreamer-captured audio (48 kHz WAV → 16 kHz): %.2f %% of one core",
        captureCPU))
print(
    String(
        format:
            #"{"event":"benchmark","name":"alerts","pinPairingP50Ms":%.2f,"pinPairingP99Ms":%.2f,"qrPairingP50Ms":%.2f,"qrPairingP99Ms":%.2f,"noiseLatencyP50Ms":%.3f,"noiseLatencyP99Ms":%.3f,"monitorCPUPercent":%.2f,"monitorCaptureCPUPercent":%.2f}"#,
        percentile(pinTimes, 0.5), percentile(pinTimes, 0.99), percentile(qrTimes, 0.5), percentile(qrTimes, 0.99),
        percentile(latencies, 0.5), percentile(latencies, 0.99), cpu, captureCPU))
await quic.shutdown()
serving.cancel()
