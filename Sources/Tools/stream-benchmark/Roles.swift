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

/// One JSON object per line on stdout (the parent reads them).
func emit(_ object: [String: any Sendable]) {
    guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return }
    FileHandle.standardOutput.write(data + Data("\n".utf8))
}

/// `--name value` arguments.
struct RoleArguments {
    private var values: [String: String] = [:]

    init(_ arguments: [String]) throws {
        var iterator = arguments.makeIterator()
        while let name = iterator.next() {
            guard name.hasPrefix("--"), let value = iterator.next() else {
                throw BenchmarkFailure(description: "expected --name value pairs, got \(arguments)")
            }
            values[String(name.dropFirst(2))] = value
        }
    }

    func string(_ name: String) throws -> String {
        guard let value = values[name] else { throw BenchmarkFailure(description: "missing --\(name)") }
        return value
    }

    func int(_ name: String, default fallback: Int) -> Int { values[name].flatMap(Int.init) ?? fallback }
}

/// `stream-benchmark monitor-role --host ADDR`: a monitor whose microphone is the click track, streaming over
/// ADDR. Prints `ready` {port, qr}, `click` {t} for every click, and `stream_cpu` {mediaType, cpuPercent} for each
/// stream that ends (this process's CPU while it ran). Runs until killed.
func runMonitorRole(_ arguments: RoleArguments) async throws -> Never {
    let host = try arguments.string("host")
    let microphone = ClickTrack { emit(["event": "click", "t": $0]) }
    let identity = try DeviceIdentity.generate(now: Date())
    let quic = try await QUICListener.bind(host: host, port: 0, identity: identity)
    let engine = try GStreamerMediaEngine(
        configuration: .init(
            dtlsCertificate: try DTLSCertificate.generate(now: Date()), audioSource: .test(.silence),
            audioFeed: microphone.feed, iceAddresses: [host]))
    let monitor = try MonitorService(
        identity: identity, database: try CribCallDatabase.inMemory(), transport: quic,
        mediaEngine: engine)
    microphone.start()
    let serving = Task { await monitor.run() }
    emit(["event": "ready", "port": quic.port, "qr": await monitor.showQR(port: quic.port).qrText])
    var started: [String: (type: MediaType, cpu: Double, wall: Int64)] = [:]
    for await event in monitor.events {
        switch event {
        case .streamStarted(let sessionId, _, let mediaType, _):
            started[sessionId] = (mediaType, cpuSeconds(), monotonicNanoseconds())
        case .streamEnded(let sessionId, _):
            guard let start = started.removeValue(forKey: sessionId) else { continue }
            let wall = Double(monotonicNanoseconds() - start.wall) / 1e9
            emit([
                "event": "stream_cpu", "mediaType": start.type.rawValue,
                "cpuPercent": (cpuSeconds() - start.cpu) / wall * 100, "seconds": wall,
            ])
        default:
            break
        }
    }
    await serving.value
    exit(0)
}

/// `stream-benchmark listener-role --qr TEXT --monitor-host ADDR --host ADDR [--audio-seconds 20]
/// [--video-seconds 10]`: pairs by QR, opens an audio stream, then an audio+video one, and prints `onset` {t,
/// mediaType} for every click it hears (when the decoded buffer is due at the speaker), then `done`.
func runListenerRole(_ arguments: RoleArguments) async throws -> Never {
    let host = try arguments.string("host")
    let phase = Mutex<String>("none")
    let detector = OnsetDetector { time in emit(["event": "onset", "t": time, "mediaType": phase.withLock { $0 }]) }
    let identity = try DeviceIdentity.generate(now: Date())
    let engine = try GStreamerMediaEngine(
        configuration: .init(
            dtlsCertificate: try DTLSCertificate.generate(now: Date()), iceAddresses: [host],
            receiverOutput: .samples(.init { samples, _ in detector.process(samples) })))
    let listener = ListenerService(
        identity: identity, name: "bench", database: try CribCallDatabase.inMemory(),
        connector: try QUICConnector(identity: identity), mediaEngine: engine)
    let paired = try await listener.pairWithQR(
        qrText: try arguments.string("qr"),
        host: try arguments.string("monitor-host"))
    let log = EventLog()
    let listening = Task { for await event in await listener.listen() { log.append(event) } }
    guard await log.wait(for: { if case .connected = $0 { true } else { false } }) else {
        throw BenchmarkFailure(description: "the listener did not connect")
    }
    let phases: [(MediaType, Int)] = [
        (.audio, arguments.int("audio-seconds", default: 20)),
        (.audioVideo, arguments.int("video-seconds", default: 10)),
    ]
    for (mediaType, seconds) in phases where seconds > 0 {
        let sessionId = try await listener.openStream(monitorId: paired.monitorId, mediaType: mediaType)
        guard await log.wait(for: { if case .streamStarted(_, sessionId, _) = $0 { true } else { false } }) else {
            throw BenchmarkFailure(description: "the \(mediaType.rawValue) stream never delivered audio")
        }
        phase.withLock { $0 = mediaType.rawValue }
        let cpu = cpuSeconds()
        try await Task.sleep(for: .seconds(seconds))
        emit([
            "event": "listener_cpu", "mediaType": mediaType.rawValue,
            "cpuPercent": (cpuSeconds() - cpu) / Double(seconds) * 100,
        ])
        phase.withLock { $0 = "none" }
        await listener.endStream(sessionId: sessionId)
        _ = await log.wait(for: { if case .streamEnded(_, sessionId, _) = $0 { true } else { false } })
    }
    emit(["event": "done"])
    listening.cancel()
    exit(0)
}
