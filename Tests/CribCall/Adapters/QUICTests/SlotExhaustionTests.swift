import ControlTransport
import CribCallMonitor
import CribCallProtocol
import CribCallStore
import CribCallTestSupport
import DeviceIdentity
import Foundation
import QUIC
import SoundDetection
import TestSupport
import Testing

/// Issue 17 item 1: someone on the LAN opens hundreds of connections with throwaway certificates and keeps them
/// alive with PINGs (aioquic, `Tests/Interop/quic/flood.py`, from five loopback addresses). A paired listener must
/// still get in and receive the next alert; the strangers hold only what admission lets them.
@Suite(
    "A monitor under a connection flood", .heavy(cores: 1, "300 aioquic handshakes beside the monitor"),
    .enabled(if: InteropPeers.pythonAvailable(for: "QUIC connection flood")))
struct SlotExhaustionTests {
    static let flood = Fixtures.repositoryRoot.appendingPathComponent("Tests/Interop/quic/flood.py").path

    @Test("300 silent strangers from five addresses cannot keep a paired listener from the next alert")
    func floodThenAlert() async throws {
        let monitor = try DeviceIdentity.generate(now: Date())
        let listener = try DeviceIdentity.generate(now: Date())
        let database = try CribCallDatabase.inMemory()
        let listenerId = listener.deviceId.uuidString.lowercased()
        try database.trust(listener, as: listenerId, name: "Dad's laptop")
        let quic = try await QUICListener.bind(host: "127.0.0.1", port: 0, identity: monitor)
        let service = try MonitorService(identity: monitor, database: database, transport: quic)
        let serving = Task { await service.run() }
        let draining = Task { for await _ in service.events {} }
        defer {
            serving.cancel()
            draining.cancel()
        }

        let python = try #require(InteropPeers.python, "the interop venv is missing: run `make test`")
        let sources = (2...6).map { "127.0.0.\($0)" }
        let flood = try BackgroundProcess(
            python,
            [
                Self.flood, "--host", "127.0.0.1", "--port", "\(quic.port)", "--sources",
                sources.joined(separator: ","),
                "--connections", "300", "--handshake-timeout", "3", "--duration", "20",
            ])
        let flooded = try #require(
            await flood.line(timeout: .seconds(120)) { jsonObject($0)?["event"] as? String == "flooded" }
                .flatMap(jsonObject),
            "flood.py: \(flood.output.suffix(5)) \(flood.errorOutput)")
        let established = try #require(flooded["established"] as? Int)
        let admission = QUICAdmission()
        #expect(
            established <= sources.count * admission.maxUntrustedPerAddress + admission.maxUntrusted,
            "the strangers got \(established) connections: \(flooded)")

        // The paired listener connects through the flood and gets the next alert.
        let started = ContinuousClock.now
        // Patient: the flood's handshakes share the two cores (this is about getting in, not how fast).
        var patient = QUICConfiguration()
        patient.handshakeTimeout = .seconds(30)
        let connection = try await QUICConnector(identity: listener, configuration: patient)
            .connect(host: "127.0.0.1", port: quic.port, pinnedFingerprint: monitor.fingerprint)
        try await connection.send(.ping(Ping(timestamp: 1)))
        var frames = connection.inbound.makeAsyncIterator()
        var noise: NoiseEvent?
        var reported = false
        while noise == nil, let frame = try await frames.next() {
            switch try ControlMessageCodec.decode(payload: frame) {
            case .pong:
                // Served: the monitor knows the connection now.
                _ = try await service.reportNoise(NoiseDetection(offsetMs: 0, peakLevel: 80, durationMs: 600))
                reported = true
            case .noiseEvent(let event) where reported:
                noise = event
            default:
                continue
            }
        }
        #expect(noise?.peakLevel == 80, "no alert reached the paired listener")
        let statistics = await quic.admissionStatistics()
        #expect(statistics.retries > 0, "under load new clients prove their address first: \(statistics)")
        await connection.close(code: 0)
        await flood.stop()
        let summary = flood.output.last { jsonObject($0)?["event"] as? String == "summary" }.flatMap(jsonObject)
        print(
            "connection flood: \(flooded), monitor admission \(statistics), listener in + alert after "
                + "\(ContinuousClock.now - started), flood summary \(summary ?? [:])")
        await quic.shutdown()
    }
}
