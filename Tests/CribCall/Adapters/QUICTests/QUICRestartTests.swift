import ControlTransport
import CribCallProtocol
import DeviceIdentity
import DeviceIdentityStore
import Foundation
import QUIC
import TestSupport
import Testing

/// What a listener sees when its monitor crashes and comes back: the restarted monitor knows nothing of the old
/// connection, so it answers with a stateless reset (RFC 9000 §10.3), whose token is derived from the device key
/// and so is the same before and after the restart. The listener learns at once, not after the 30 s idle timeout.
@Suite("QUIC stateless reset after a monitor restart")
struct QUICRestartTests {
    @Test("a monitor killed and restarted on the same port resets its old connections at once")
    func resetAfterRestart() async throws {
        let directory = try Subprocess.temporaryDirectory("quic-restart")
        defer { try? FileManager.default.removeItem(at: directory) }
        let probe = try Subprocess.builtProduct("quic-probe")
        let monitorDirectory = directory.appendingPathComponent("monitor").path

        func startMonitor(port: Int) async throws -> (BackgroundProcess, Int, CertificateFingerprint) {
            let process = try BackgroundProcess(
                probe,
                [
                    "server", "--host", "127.0.0.1", "--port", "\(port)",
                    "--data-dir", monitorDirectory,
                ])
            let listening = try await process.ready("quic-probe server") { $0.contains(#""event":"listening""#) }
            let object = try #require(try JSONSerialization.jsonObject(with: Data(listening.utf8)) as? [String: Any])
            let fingerprint = try #require(
                (object["fingerprint"] as? String).flatMap { CertificateFingerprint(hex: $0) })
            return (process, try #require(object["port"] as? Int), fingerprint)
        }

        // Not port 0: another test's socket could take the kernel's choice between the kill and the restart.
        let (first, port, fingerprint) = try await FixedPort.belowEphemeralRange { try await startMonitor(port: $0) }
        let listener = try DeviceIdentity.generate(now: Date())
        let connection = try await QUICConnector(identity: listener)
            .connect(host: "127.0.0.1", port: port, pinnedFingerprint: fingerprint)
        try await connection.send(.ping(Ping(timestamp: 1)))
        var frames = connection.inbound.makeAsyncIterator()
        #expect(
            try await frames.next().map { try ControlMessageCodec.decode(payload: $0) } == .pong(Ping(timestamp: 1)))

        kill(first.processIdentifier, SIGKILL)  // a crash: no CONNECTION_CLOSE is sent
        await first.waitForExit()
        let (second, samePort, sameFingerprint) = try await startMonitor(port: port)
        defer { Task { await second.stop() } }
        #expect(samePort == port && sameFingerprint == fingerprint, "the restarted monitor keeps its identity")

        try await connection.send(.ping(Ping(timestamp: 2)))
        // The reset ends the connection; waiting is bounded well below the 30 s idle timeout.
        let ended = await withTaskGroup(of: ConnectionCloseReason?.self) { group in
            group.addTask { await connection.closed() }
            group.addTask {
                try? await Task.sleep(for: .seconds(10))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        #expect(ended != nil, "the connection must end by stateless reset, not by idle timeout")
        #expect(try await frames.next() == nil)
        await second.stop()
    }
}
