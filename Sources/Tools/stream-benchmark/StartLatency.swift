import BenchmarkSupport
import CribCallListener
import CribCallMonitor
import CribCallProtocol
import CribCallStore
import DeviceIdentity
import Foundation
import Media
import QUIC
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

/// START_STREAM_REQUEST → first decoded audio buffer at the listener: a MonitorService and a ListenerService in
/// this process, over real QUIC and webrtcbin on 127.0.0.1, the sender fed by a shared "microphone".
/// - Returns: The p50 and p95 in milliseconds over `streams` streams.
func measureStartLatency(streams: Int = 20) async throws -> (p50: Double, p95: Double) {
    let clock = ContinuousClock()
    let microphone = ClickTrack()
    microphone.start()
    defer { microphone.stop() }
    let monitorIdentity = try DeviceIdentity.generate(now: Date())
    let quic = try await QUICListener.bind(host: "127.0.0.1", port: 0, identity: monitorIdentity)
    let senderEngine = try GStreamerMediaEngine(
        configuration: .init(
            dtlsCertificate: try DTLSCertificate.generate(now: Date()), audioFeed: microphone.feed,
            iceAddresses: ["127.0.0.1"]))
    let monitor = try MonitorService(
        identity: monitorIdentity, database: try CribCallDatabase.inMemory(),
        transport: quic, mediaEngine: senderEngine)
    let serving = Task {
        async let served: Void = monitor.run()
        for await _ in monitor.events {}
        await served
    }
    defer { serving.cancel() }

    let listenerIdentity = try DeviceIdentity.generate(now: Date())
    let receiverEngine = try GStreamerMediaEngine(
        configuration: .init(
            dtlsCertificate: try DTLSCertificate.generate(now: Date()), iceAddresses: ["127.0.0.1"],
            receiverOutput: .discard))
    let listener = ListenerService(
        identity: listenerIdentity, name: "bench", database: try CribCallDatabase.inMemory(),
        connector: try QUICConnector(identity: listenerIdentity), mediaEngine: receiverEngine)
    let paired = try await listener.pairWithQR(qrText: await monitor.showQR(port: quic.port).qrText, host: "127.0.0.1")
    let log = EventLog()
    let listening = Task { for await event in await listener.listen() { log.append(event) } }
    defer { listening.cancel() }
    guard await log.wait(for: { if case .connected = $0 { true } else { false } }) else {
        throw BenchmarkFailure(description: "the listener did not connect")
    }
    var startTimes: [Double] = []
    for index in 0..<streams {
        let start = clock.now
        let sessionId = try await listener.openStream(monitorId: paired.monitorId, mediaType: .audio)
        guard await log.wait(for: { if case .streamStarted(_, sessionId, _) = $0 { true } else { false } }) else {
            throw BenchmarkFailure(description: "stream \(index + 1) of \(streams) never delivered audio")
        }
        startTimes.append(milliseconds(clock.now - start))
        await listener.endStream(sessionId: sessionId)
        _ = await log.wait(for: { if case .streamEnded(_, sessionId, _) = $0 { true } else { false } })
    }
    await quic.shutdown()
    return (percentile(startTimes, 0.5), percentile(startTimes, 0.95))
}
