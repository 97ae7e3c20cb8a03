import ControlTransport
import CribCallProtocol
import DeviceIdentity
import Foundation
import QUIC
import Synchronization
import Testing

/// Who gets the monitor's connection slots (``QUICAdmission``): Retry under load, what one address may hold, and
/// the oldest stranger making room for a newcomer while trusted connections are never touched.
@Suite("QUIC admission: Retry, per-address limit, eviction of strangers")
struct QUICAdmissionTests {
    let monitor: DeviceIdentity

    init() throws {
        monitor = try DeviceIdentity.generate(now: Date())
    }

    /// A monitor that holds every connection it accepts, marking those of `trusting` trusted.
    final class HoldingServer: Sendable {
        final class Held: Sendable {
            let connections = Mutex<[any ControlConnection]>([])
        }
        let quic: QUICListener
        private let held = Held()
        private let task: Task<Void, Never>

        init(identity: DeviceIdentity, admission: QUICAdmission, trusting: Set<CertificateFingerprint> = [])
            async throws
        {
            var configuration = QUICConfiguration()
            configuration.admission = admission
            quic = try await QUICListener.bind(
                host: "127.0.0.1", port: 0, identity: identity, configuration: configuration)
            let connections = quic.connections
            let held = self.held
            task = Task {
                for await connection in connections {
                    if trusting.contains(connection.peer.fingerprint) { connection.markTrusted() }
                    held.connections.withLock { $0.append(connection) }
                }
            }
        }

        /// Marks the held connection of `identity` trusted (as a monitor does once a listener paired on it).
        func trust(_ identity: DeviceIdentity) {
            for connection in held.connections.withLock({ $0 })
            where connection.peer.fingerprint == identity.fingerprint {
                connection.markTrusted()
            }
        }

        func stop() async {
            await quic.shutdown()
            await task.value
        }
    }

    /// A client that connects (within `timeout`) and then says nothing.
    func connect(_ server: HoldingServer, as identity: DeviceIdentity, timeout: Duration = .seconds(10)) async throws
        -> any ControlConnection
    {
        var configuration = QUICConfiguration()
        configuration.handshakeTimeout = timeout
        return try await QUICConnector(identity: identity, configuration: configuration)
            .connect(host: "127.0.0.1", port: server.quic.port, pinnedFingerprint: monitor.fingerprint)
    }

    @Test("with Retry on for every client, clients prove their address and connect as before")
    func retryAlways() async throws {
        var admission = QUICAdmission()
        admission.retryThreshold = 0
        let server = try await HoldingServer(identity: monitor, admission: admission)
        for _ in 0..<3 {
            let connection = try await connect(server, as: try DeviceIdentity.generate(now: Date()))
            await connection.close(code: 0)
        }
        let statistics = await server.quic.admissionStatistics()
        #expect(statistics.retries >= 3 && statistics.invalidTokens == 0, "\(statistics)")
        await server.stop()
    }

    @Test("an address holding its untrusted connections gets no more; a connection trusted frees its slot")
    func perAddress() async throws {
        var admission = QUICAdmission()
        admission.maxUntrustedPerAddress = 2
        admission.retryThreshold = 100
        let server = try await HoldingServer(identity: monitor, admission: admission)
        let first = try DeviceIdentity.generate(now: Date())
        let held = [
            try await connect(server, as: first), try await connect(server, as: DeviceIdentity.generate(now: Date())),
        ]
        await #expect(throws: ControlTransportError.self) {
            _ = try await connect(server, as: DeviceIdentity.generate(now: Date()), timeout: .seconds(1))
        }
        #expect(await server.quic.admissionStatistics().droppedForAddress >= 1)
        server.trust(first)  // paired: no longer a stranger
        try await Task.sleep(for: .milliseconds(100))
        let next = try await connect(server, as: try DeviceIdentity.generate(now: Date()))
        await next.close(code: 0)
        for connection in held { await connection.close(code: 0) }
        await server.stop()
    }

    @Test("at the limit the oldest stranger is closed (UNAUTHORIZED) for a newcomer; trusted ones never are")
    func eviction() async throws {
        var admission = QUICAdmission()
        admission.maxUntrusted = 3
        admission.maxUntrustedPerAddress = 10
        admission.retryThreshold = 100
        let trustedListener = try DeviceIdentity.generate(now: Date())
        let server = try await HoldingServer(
            identity: monitor, admission: admission, trusting: [trustedListener.fingerprint])
        let trusted = try await connect(server, as: trustedListener)
        var strangers: [any ControlConnection] = []
        for _ in 0..<3 {
            strangers.append(try await connect(server, as: DeviceIdentity.generate(now: Date())))
            try await Task.sleep(for: .milliseconds(20))  // a distinct arrival order
        }
        let newcomer = try await connect(server, as: DeviceIdentity.generate(now: Date()))
        #expect(await strangers[0].closed() == .peerApplication(code: 2, reason: ""))
        let another = try await connect(server, as: DeviceIdentity.generate(now: Date()))
        #expect(await strangers[1].closed() == .peerApplication(code: 2, reason: ""))
        #expect(await server.quic.admissionStatistics().evicted == 2)
        // The trusted listener was connected first of all and is still served.
        try await trusted.send(.ping(Ping(timestamp: 1)))
        for connection in [trusted, strangers[2], newcomer, another] { await connection.close(code: 0) }
        #expect(await trusted.closed() == .local(code: 0))
        await server.stop()
    }
}
