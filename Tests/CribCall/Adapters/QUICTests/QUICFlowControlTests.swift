import ControlTransport
import CribCallProtocol
import DeviceIdentity
import Foundation
import NIOCore
import QUIC
import Synchronization
import Testing

@Suite("QUIC idle timeout and backpressure")
struct QUICFlowControlTests {
    let monitor: DeviceIdentity
    let listener: DeviceIdentity

    init() throws {
        monitor = try DeviceIdentity.generate(now: Date())
        listener = try DeviceIdentity.generate(now: Date())
    }

    @Test("a connection with no traffic ends with idleTimeout on both sides")
    func idleTimeout() async throws {
        var configuration = QUICConfiguration()
        // Long enough that a starved handshake on a loaded machine is never taken for an idle connection.
        configuration.idleTimeout = .seconds(2)
        let quic = try await QUICListener.bind(
            host: "127.0.0.1", port: 0, identity: monitor, configuration: configuration
        )
        let accepted = Task { () -> (any ControlConnection)? in
            for await connection in quic.connections { return connection }
            return nil
        }
        let connection = try await QUICConnector(identity: listener, configuration: configuration)
            .connect(host: "127.0.0.1", port: quic.port, pinnedFingerprint: monitor.fingerprint)
        let serverSide = try #require(await accepted.value)
        #expect(await connection.closed() == .idleTimeout)
        #expect(await serverSide.closed() == .idleTimeout)
        await #expect(throws: ControlTransportError.self) { try await connection.send(.ping(Ping(timestamp: 1))) }
        await quic.shutdown()
    }

    @Test("a peer that does not read makes send suspend instead of buffering without bound; nothing is lost")
    func backpressure() async throws {
        let quic = try await QUICListener.bind(host: "127.0.0.1", port: 0, identity: monitor)
        let accepted = Task { () -> (any ControlConnection)? in
            for await connection in quic.connections { return connection }
            return nil
        }
        let connection = try await QUICConnector(identity: listener)
            .connect(host: "127.0.0.1", port: quic.port, pinnedFingerprint: monitor.fingerprint)
        let frame = [UInt8](repeating: 0x61, count: 64 * 1024)
        let total = 200  // 12.5 MiB: far more than the 1 MiB window plus the 1 MiB send watermark
        let sent = Counter()
        let sender = Task {
            for _ in 0..<total {
                try await connection.send(frame)
                sent.increment()
            }
        }
        // The server does not read yet. Wait until the sender stops making progress.
        let serverSide = try #require(await accepted.value)
        // First the sender gets going (on a loaded machine its task may start late), then it must come to a halt.
        let started = ContinuousClock.now
        while sent.value == 0, ContinuousClock.now - started < .seconds(30) {
            try await Task.sleep(for: .milliseconds(20))
        }
        var last = -1
        while sent.value != last {
            last = sent.value
            try await Task.sleep(for: .milliseconds(300))
        }
        let stalledAt = sent.value
        // Window (1 MiB) + in-flight watermark (1 MiB) + the frame that suspended: about 33 frames of 64 KiB.
        #expect(stalledAt < 40, "send must suspend when the peer does not read (stalled after \(stalledAt) frames)")
        #expect(stalledAt > 0)

        var received = 0
        for try await payload in serverSide.inbound {
            #expect(payload.readableBytes == frame.count)
            received += 1
            if received == total { break }
        }
        try await sender.value
        #expect(received == total, "every frame arrives once the reader reads")
        await connection.close(code: 0)
        await quic.shutdown()
    }

    final class Counter: Sendable {
        private let count = Mutex(0)
        var value: Int { count.withLock { $0 } }
        func increment() { count.withLock { $0 += 1 } }
    }
}
