import ControlTransport
import CribCallControl
import CribCallProtocol
import DeviceIdentity
import Foundation
import QUIC
import Synchronization
import TestSupport
import Testing

/// The QUIC control channel against an independent implementation nobody here wrote: aioquic (Python), driven
/// through Tests/Interop/quic/cribcall_peer.py.
@Suite(
    "QUIC interop with aioquic", .serialized, .heavy(cores: 0.75, "aioquic peer processes"),
    .enabled(if: InteropPeers.pythonAvailable(for: "aioquic interop")))
struct AioquicInteropTests {
    static let peerScript = Fixtures.repositoryRoot.appendingPathComponent("Tests/Interop/quic/cribcall_peer.py").path

    let monitor: DeviceIdentity
    let directory: URL

    init() throws {
        monitor = try DeviceIdentity.generate(now: Date())
        directory = try Subprocess.temporaryDirectory("aioquic")
    }

    /// A Python identity (certificate + key written by the peer itself) and its fingerprint.
    func pythonIdentity(_ name: String) async throws -> (cert: String, key: String, fingerprint: String) {
        let folder = directory.appendingPathComponent(name).path
        let process = try BackgroundProcess(try python(), [Self.peerScript, "gen-cert", "--out", folder])
        #expect(await process.waitForExit() == 0, "gen-cert failed: \(process.errorOutput)")
        let object = try json(try #require(process.output.first))
        return ("\(folder)/cert.pem", "\(folder)/key.pem", try #require(object["fingerprint"] as? String))
    }

    func python() throws -> String {
        try #require(InteropPeers.python, "the interop venv is missing: run `make test`")
    }

    func json(_ line: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    /// A Swift monitor enforcing PROTOCOL.md §4 with ControlSession; PING is answered with PONG.
    final class SwiftMonitor: Sendable {
        let quic: QUICListener
        let counter = Counter()
        let task: Task<Void, Never>

        /// Connections whose handshake reached the monitor.
        var connectionsSeen: Int { counter.value.withLock { $0 } }

        init(identity: DeviceIdentity, trusted: Set<String>) async throws {
            quic = try await QUICListener.bind(host: "127.0.0.1", port: 0, identity: identity)
            let connections = quic.connections
            let seen = counter
            task = Task {
                await withDiscardingTaskGroup { group in
                    for await connection in connections {
                        seen.value.withLock { $0 += 1 }
                        group.addTask {
                            let session = ControlSession(connection: connection, role: .monitor) {
                                trusted.contains(connection.peer.fingerprint.hex) ? .trusted : .untrusted
                            }
                            _ = await session.run { message in
                                if case .ping(let ping) = message { return [.send(.pong(ping))] }
                                return []
                            }
                        }
                    }
                }
            }
        }

        func stop() async {
            await quic.shutdown()
            await task.value
        }
    }

    final class Counter: Sendable {
        let value = Mutex(0)
    }

    /// Runs the aioquic client against `port` and returns its JSON events.
    func runClient(
        port: Int, identity: (cert: String, key: String, fingerprint: String), pin: String, arguments: [String]
    ) async throws -> (status: Int32?, events: [[String: Any]]) {
        let process = try BackgroundProcess(
            try python(),
            [
                Self.peerScript, "client", "--host", "127.0.0.1", "--port", "\(port)", "--cert", identity.cert,
                "--key", identity.key, "--pin", pin, "--timeout", "8",
            ] + arguments)
        try await process.ready("cribcall_peer.py client") { $0.contains(#""event":"ready""#) }
        let status = await process.waitForExit(timeout: .seconds(20))
        return (status, try process.output.map { try json($0) })
    }

    func frames(_ events: [[String: Any]]) -> [[String: Any]] {
        events.filter { $0["event"] as? String == "frame" }.compactMap { $0["json"] as? [String: Any] }
    }

    func closeCode(_ events: [[String: Any]]) -> Int? {
        events.first { $0["event"] as? String == "closed" }.flatMap { $0["errorCode"] as? Int }
    }

    @Test("aioquic client → Swift monitor: pinned handshake, PING answered PONG")
    func aioquicClientPing() async throws {
        let client = try await pythonIdentity("client")
        let server = try await SwiftMonitor(identity: monitor, trusted: [client.fingerprint])
        let result = try await runClient(
            port: server.quic.port, identity: client, pin: monitor.fingerprint.hex,
            arguments: ["--send-json", #"{"timestamp":123,"type":"PING"}"#, "--expect", "1"])
        await server.stop()
        #expect(result.status == 0)
        let handshake = result.events.first { $0["event"] as? String == "handshake" }
        #expect(handshake?["serverFingerprint"] as? String == monitor.fingerprint.hex)
        #expect(handshake?["alpn"] as? String == "cribcall/1")
        #expect(frames(result.events).first?["type"] as? String == "PONG")
        #expect(frames(result.events).first?["timestamp"] as? Int == 123)
    }

    /// Each PROTOCOL.md §4 error case as seen by the aioquic client: the ERROR frame, then the close code.
    @Test(
        "aioquic client → Swift monitor: every error case gives the exact ERROR frame and close code",
        arguments: [
            ("untrusted PING", false, ["--send-json", #"{"timestamp":1,"type":"PING"}"#], 2, "PING", 2),
            (
                "untrusted known non-pairing type", false, ["--send-json", #"{"afterSeq":0,"type":"EVENTS_SINCE"}"#], 2,
                "EVENTS_SINCE", 2
            ),
            ("untrusted unknown type", false, ["--send-json", #"{"type":"NOPE"}"#], 3, "NOPE", 3),
            ("length 0", true, ["--send-raw-hex", "00000000"], 1, nil, 1),
            ("length over 262144", true, ["--send-raw-hex", "00040001"], 1, nil, 1),
            ("invalid JSON", true, ["--send-text", "{not json"], 1, nil, 1),
            ("no type", true, ["--send-json", #"{"timestamp":1}"#], 1, nil, 1),
            ("malformed PING", true, ["--send-json", #"{"type":"PING"}"#], 1, "PING", 1),
        ] as [(String, Bool, [String], Int, String?, Int)])
    func errorCases(name: String, trusted: Bool, sends: [String], code: Int, inReplyTo: String?, close: Int)
        async throws
    {
        let client = try await pythonIdentity("client-\(UUID().uuidString.prefix(8))")
        let server = try await SwiftMonitor(identity: monitor, trusted: trusted ? [client.fingerprint] : [])
        // Expect one frame more than the ERROR, so the client stays until the monitor closes.
        let result = try await runClient(
            port: server.quic.port, identity: client, pin: monitor.fingerprint.hex,
            arguments: sends + ["--expect", "2"])
        await server.stop()
        let error = try #require(frames(result.events).first, "\(name): no ERROR frame: \(result.events)")
        #expect(error["type"] as? String == "ERROR")
        #expect(error["code"] as? Int == code)
        #expect(error["error"] as? String == ErrorCode(rawValue: code)?.name)
        #expect(error["inReplyTo"] as? String == inReplyTo)
        #expect((error["message"] as? String)?.isEmpty == false)
        // The close follows the frame; the aioquic client waits for it after its expected frame.
        let closed = result.events.first { $0["event"] as? String == "closed" }
        #expect(closed?["errorCode"] as? Int == close, "\(name): \(result.events)")
        #expect(closed?["frameType"] as? Int == 0x1d, "an application CONNECTION_CLOSE")
    }

    @Test("aioquic client → Swift monitor: an unknown type from a trusted listener keeps the connection open")
    func trustedUnknownStaysOpen() async throws {
        let client = try await pythonIdentity("client")
        let server = try await SwiftMonitor(identity: monitor, trusted: [client.fingerprint])
        let result = try await runClient(
            port: server.quic.port, identity: client, pin: monitor.fingerprint.hex,
            arguments: [
                "--send-json", #"{"type":"NOPE"}"#,
                "--send-json", #"{"timestamp":7,"type":"PING"}"#, "--expect", "2",
            ])
        await server.stop()
        let received = frames(result.events)
        #expect(received.count == 2)
        #expect(received.first?["code"] as? Int == 3)
        #expect(received.last?["type"] as? String == "PONG")
        #expect(closeCode(result.events) == nil, "the monitor must not close: \(result.events)")
    }

    @Test("aioquic client pinning another fingerprint aborts; the Swift monitor never sees a connection")
    func aioquicPinMismatch() async throws {
        let client = try await pythonIdentity("client")
        let server = try await SwiftMonitor(identity: monitor, trusted: [client.fingerprint])
        let wrongPin = String(repeating: "ab", count: 32)
        let result = try await runClient(
            port: server.quic.port, identity: client, pin: wrongPin,
            arguments: ["--send-json", #"{"timestamp":1,"type":"PING"}"#])
        try await Task.sleep(for: .milliseconds(200))
        let seen = server.connectionsSeen
        await server.stop()
        #expect(result.status == 3)
        #expect(result.events.contains { $0["event"] as? String == "pin-mismatch" })
        #expect(seen == 0)
    }

    @Test(
        "aioquic clients without our ALPN or without a certificate are refused in the handshake",
        arguments: [["--alpn", "h3"], ["--alpn", ""], ["--no-cert"]])
    func refusedHandshakes(_ flags: [String]) async throws {
        let client = try await pythonIdentity("client")
        let server = try await SwiftMonitor(identity: monitor, trusted: [client.fingerprint])
        let result = try await runClient(
            port: server.quic.port, identity: client, pin: monitor.fingerprint.hex,
            arguments: flags + ["--send-json", #"{"timestamp":1,"type":"PING"}"#, "--expect", "1"])
        try await Task.sleep(for: .milliseconds(200))
        let seen = server.connectionsSeen
        await server.stop()
        #expect(seen == 0, "no connection may reach the monitor: \(result.events)")
        #expect(frames(result.events).isEmpty)
    }

    @Test("Swift client → aioquic server: pinned handshake and PING/PONG; an untrusted client gets ERROR 2 and close 2")
    func swiftClientAgainstAioquic() async throws {
        let server = try await pythonIdentity("server")
        let trustedClient = try DeviceIdentity.generate(now: Date())
        let process = try BackgroundProcess(
            try python(),
            [
                Self.peerScript, "server", "--host", "127.0.0.1", "--port", "0", "--cert", server.cert, "--key",
                server.key,
                "--trusted", trustedClient.fingerprint.hex,
            ])
        defer { Task { await process.stop() } }
        let listening = try await process.ready("cribcall_peer.py server") { $0.contains("\"listening\"") }
        let port = try #require(try json(listening)["port"] as? Int)
        let pin = try #require(CertificateFingerprint(hex: server.fingerprint))

        let connection = try await QUICConnector(identity: trustedClient)
            .connect(host: "127.0.0.1", port: port, pinnedFingerprint: pin)
        try await connection.send(.ping(Ping(timestamp: 42)))
        var frames = connection.inbound.makeAsyncIterator()
        let reply = try await frames.next().map { try ControlMessageCodec.decode(payload: $0) }
        #expect(reply == ControlMessage.pong(Ping(timestamp: 42)))
        await connection.close(code: 0)

        let stranger = try await QUICConnector(identity: try DeviceIdentity.generate(now: Date()))
            .connect(host: "127.0.0.1", port: port, pinnedFingerprint: pin)
        try await stranger.send(.ping(Ping(timestamp: 1)))
        var strangerFrames = stranger.inbound.makeAsyncIterator()
        let strangerReply = try await strangerFrames.next()
        let decoded = try strangerReply.map { try ControlMessageCodec.decode(payload: $0) }
        guard case .error(let error)? = decoded else {
            Issue.record("expected ERROR")
            return
        }
        #expect(error.errorCode == ErrorCode.unauthorized && error.inReplyTo == "PING")
        let strangerClose = await stranger.closed()
        guard case .peerApplication(code: 2, _) = strangerClose else {
            Issue.record("expected an application close with code 2, got \(strangerClose)")
            return
        }
        await process.stop()
        #expect(process.output.contains { $0.contains(trustedClient.fingerprint.hex) })
    }

    @Test("Swift client pinning another fingerprint aborts against aioquic, and aioquic receives no frame")
    func swiftPinMismatchAgainstAioquic() async throws {
        let server = try await pythonIdentity("server")
        let process = try BackgroundProcess(
            try python(),
            [
                Self.peerScript, "server", "--host", "127.0.0.1", "--port", "0", "--cert", server.cert, "--key",
                server.key,
            ])
        let listening = try await process.ready("cribcall_peer.py server") { $0.contains("\"listening\"") }
        let port = try #require(try json(listening)["port"] as? Int)
        let connector = try QUICConnector(identity: try DeviceIdentity.generate(now: Date()))
        let pin = monitor.fingerprint
        var failure: ControlTransportError?
        do {
            _ = try await connector.connect(host: "127.0.0.1", port: port, pinnedFingerprint: pin)
        } catch let error as ControlTransportError {
            failure = error
        }
        guard case .fingerprintMismatch(_, let actual)? = failure else {
            Issue.record("expected a fingerprint mismatch, got \(String(describing: failure))")
            await process.stop()
            return
        }
        #expect(actual.hex == server.fingerprint)
        await process.stop()
        #expect(!process.output.contains { $0.contains(#""event":"frame""#) })
        #expect(!process.output.contains { $0.contains(#""event":"connection""#) })
    }
}
