import ControlTransport
import DeviceIdentity
import Foundation
import QUIC
import Testing

/// A UDP port belongs to one monitor: a second one is refused instead of silently sharing its packets.
@Suite("QUIC listener ports")
struct QUICPortTests {
    @Test("a second listener on a taken port is refused; port 0 never lands on a taken port")
    func portTakenOnce() async throws {
        let first = try await QUICListener.bind(
            host: "127.0.0.1", port: 0, identity: try DeviceIdentity.generate(now: Date()))
        await #expect(throws: ControlTransportError.self) {
            let second = try await QUICListener.bind(
                host: "127.0.0.1", port: first.port, identity: try DeviceIdentity.generate(now: Date()))
            await second.shutdown()
        }
        // Ephemeral ports skip the one in use (with SO_REUSEADDR they could land on it and split its packets).
        var others: [QUICListener] = []
        for _ in 0..<20 {
            others.append(
                try await QUICListener.bind(
                    host: "127.0.0.1", port: 0, identity: try DeviceIdentity.generate(now: Date())))
        }
        #expect(Set(others.map(\.port) + [first.port]).count == 21)
        for listener in others { await listener.shutdown() }
        await first.shutdown()
    }
}
