// quic-probe: a QUIC control-channel endpoint in its own process, for tests that place the two ends in
// different network namespaces (e.g. under packet loss). Harness only: the work is in QUIC and CribCallControl.
//   quic-probe server --host H [--port P] [--data-dir D]  prints {"event":"listening",...}; PING → PONG
//   quic-probe client --host H --port P --pin FP [--frames N]   N sequential PING/PONG, then {"event":"result",...}
import ControlTransport
import CribCallControl
import CribCallProtocol
import DeviceIdentity
import DeviceIdentityStore
import Foundation
import QUIC

let arguments = CommandLine.arguments
func value(_ name: String) -> String? {
    arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
}
func emit(_ object: [String: Any]) {
    let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
    FileHandle.standardOutput.write(data + Data("\n".utf8))
}
func fail(_ message: String) -> Never {
    emit(["event": "error", "message": message])
    exit(1)
}

// A data directory keeps the identity across runs (to test what a listener sees when a monitor restarts).
let identity =
    try value("--data-dir").map { try DeviceIdentityStore(directory: URL(fileURLWithPath: $0)).loadOrCreate().identity }
    ?? DeviceIdentity.generate(now: Date())
let host = value("--host") ?? "127.0.0.1"
let port = Int(value("--port") ?? "0") ?? 0

switch arguments.dropFirst().first {
case "server":
    let listener: QUICListener
    do {
        listener = try await QUICListener.bind(host: host, port: port, identity: identity)
    } catch {
        fail("cannot listen on \(host):\(port): \(error)")  // a line to read, not a crash's backtrace
    }
    emit(["event": "listening", "port": listener.port, "fingerprint": identity.fingerprint.hex])
    await withDiscardingTaskGroup { group in
        for await connection in listener.connections {
            group.addTask {
                let session = ControlSession(connection: connection, role: .monitor) { .trusted }
                let reason = await session.run { message in
                    if case .ping(let ping) = message { return [.send(.pong(ping))] }
                    return []
                }
                emit(["event": "closed", "reason": "\(reason)"])
            }
        }
    }
case "client":
    guard let pinText = value("--pin"), let pin = CertificateFingerprint(hex: pinText) else {
        fail("--pin FINGERPRINT")
    }
    let frames = Int(value("--frames") ?? "1000") ?? 1000
    let start = ContinuousClock.now
    do {
        let connection = try await QUICConnector(identity: identity).connect(
            host: host, port: port, pinnedFingerprint: pin)
        var replies = connection.inbound.makeAsyncIterator()
        for index in 0..<frames {
            try await connection.send(.ping(Ping(timestamp: Int64(index))))
            guard let reply = try await replies.next(),
                try ControlMessageCodec.decode(payload: reply) == .pong(Ping(timestamp: Int64(index)))
            else { fail("frame \(index): no matching PONG") }
        }
        await connection.close(code: 0)
        let elapsed = ContinuousClock.now - start
        emit([
            "event": "result", "frames": frames,
            "seconds": Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18,
        ])
    } catch {
        fail("\(error)")
    }
default:
    fail("usage: quic-probe server|client …")
}
