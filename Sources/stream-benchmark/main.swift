// CribCall live-stream benchmark (release build; run from the repository root):
//   swift build -c release --product stream-benchmark && .build/release/stream-benchmark
// A MonitorService and a ListenerService over real QUIC on 127.0.0.1, each with the GStreamer media engine
// (webrtcbin, Opus, DTLS-SRTP, host ICE on 127.0.0.1):
// - time from the listener's START_STREAM_REQUEST to its first decoded audio buffer (p50/p95 over 20 streams);
// - whole-process CPU while one audio stream runs for 10 s (monitor's sender and listener's receiver together).
import AudioCapture
import BenchmarkSupport
import CribCallListener
import CribCallMonitor
import CribCallProtocol
import CribCallStore
import DeviceIdentity
import Foundation
import Media
import QUIC
import SoundDetection
import StreamMedia
import Synchronization

/// The listener's events, for waiting on.
final class EventLog: Sendable {
    private let events = Mutex<[ListenerEvent]>([])
    func append(_ event: ListenerEvent) { events.withLock { $0.append(event) } }
    func wait(timeout: Duration = .seconds(10), for predicate: (ListenerEvent) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if events.withLock({ $0.contains(where: predicate) }) { return true }
            try? await Task.sleep(for: .milliseconds(1))
        }
        return false
    }
}

struct BenchmarkFailure: Error, CustomStringConvertible {
    var description: String
}

let clock = ContinuousClock()
let monitorIdentity = try DeviceIdentity.generate(now: Date())
let quic = try await QUICListener.bind(host: "127.0.0.1", port: 0, identity: monitorIdentity)
let senderEngine = try GStreamerMediaEngine(configuration: .init(
    dtlsCertificate: try DTLSCertificate.generate(now: Date()), audioSource: .test(.cry), iceAddresses: ["127.0.0.1"]))
let monitor = try MonitorService(identity: monitorIdentity, database: try CribCallDatabase.inMemory(), transport: quic,
                                 mediaEngine: senderEngine)
let serving = Task {
    async let served: Void = monitor.run()
    for await _ in monitor.events {}
    await served
}

let listenerIdentity = try DeviceIdentity.generate(now: Date())
let receiverEngine = try GStreamerMediaEngine(configuration: .init(
    dtlsCertificate: try DTLSCertificate.generate(now: Date()), iceAddresses: ["127.0.0.1"], receiverOutput: .discard))
let listener = ListenerService(identity: listenerIdentity, name: "bench", database: try CribCallDatabase.inMemory(),
                               connector: try QUICConnector(identity: listenerIdentity), mediaEngine: receiverEngine)
let paired = try await listener.pairWithQR(qrText: await monitor.showQR(port: quic.port).qrText, host: "127.0.0.1")
let log = EventLog()
let listening = Task { for await event in await listener.listen() { log.append(event) } }
guard await log.wait(for: { if case .connected = $0 { true } else { false } }) else {
    throw BenchmarkFailure(description: "the listener did not connect")
}

// START_STREAM_REQUEST → first decoded audio buffer at the listener.
var startTimes: [Double] = []
for _ in 0..<20 {
    let start = clock.now
    let sessionId = try await listener.openStream(monitorId: paired.monitorId, mediaType: .audio)
    guard await log.wait(for: { if case .streamStarted(_, sessionId, _) = $0 { true } else { false } }) else {
        throw BenchmarkFailure(description: "stream \(sessionId) never delivered audio")
    }
    startTimes.append(milliseconds(clock.now - start))
    await listener.endStream(sessionId: sessionId)
    _ = await log.wait(for: { if case .streamEnded(_, sessionId, _) = $0 { true } else { false } })
}
print(String(format: "START_STREAM_REQUEST → first decoded audio (20 streams, loopback): p50 %.0f ms, p95 %.0f ms",
             percentile(startTimes, 0.5), percentile(startTimes, 0.95)))

// CPU while one audio stream runs.
let sessionId = try await listener.openStream(monitorId: paired.monitorId, mediaType: .audio)
_ = await log.wait(for: { if case .streamStarted(_, sessionId, _) = $0 { true } else { false } })
let cpuStart = cpuSeconds()
let wallStart = clock.now
try await Task.sleep(for: .seconds(10))
let cpu = (cpuSeconds() - cpuStart) / (milliseconds(clock.now - wallStart) / 1000) * 100
await listener.endStream(sessionId: sessionId)
print(String(format: "CPU while streaming audio (sender + receiver in one process, 10 s): %.1f %% of one core", cpu))
print(String(format: #"{"event":"benchmark","name":"streams","startToFirstAudioP50Ms":%.1f,"startToFirstAudioP95Ms":%.1f,"streamingCPUPercent":%.2f}"#,
             percentile(startTimes, 0.5), percentile(startTimes, 0.95), cpu))
listening.cancel()
await quic.shutdown()
serving.cancel()
