import ControlTransport
import CribCallControl
import CribCallProtocol
import DeviceIdentity
import Foundation
import NIOCore
import Synchronization
import Testing

/// A `ControlSession` running on the server end of an in-memory pair, with the test acting as the client.
struct SessionHarness {
    /// The session's trust, switchable while it runs (revocation).
    final class TrustSwitch: Sendable {
        private let value: Mutex<SessionTrust>
        init(_ trust: SessionTrust) { value = Mutex(trust) }
        func set(_ trust: SessionTrust) { value.withLock { $0 = trust } }
        func get() -> SessionTrust { value.withLock { $0 } }
    }

    /// The messages the handler was given, in order.
    final class Recorder: Sendable {
        private let messages = Mutex<[ControlMessage]>([])
        func record(_ message: ControlMessage) { messages.withLock { $0.append(message) } }
        var all: [ControlMessage] { messages.withLock { $0 } }
    }

    let client: InMemoryControlConnection
    let trust: TrustSwitch
    let handled: Recorder
    let session: Task<ConnectionCloseReason, Never>
    private var frames: ControlFrameSequence.Iterator

    /// Starts a session on the server end.
    /// - Parameters:
    ///   - role: The session's role.
    ///   - trust: Its initial trust.
    ///   - handler: What the handler answers (after the harness records the message); by default PING → PONG,
    ///     PAIR_REQUEST → PAIR_REJECTED {INVALID_TOKEN}, anything else → nothing.
    init(
        role: ControlRole = .monitor,
        trust: SessionTrust,
        handler: @escaping ControlSession.Handler = SessionHarness.defaultHandler
    ) throws {
        let now = Date(timeIntervalSince1970: 1_750_000_000)
        let (client, server) = InMemoryControlTransport.pair(
            client: PeerCertificate(identity: try DeviceIdentity.generate(now: now)),
            server: PeerCertificate(identity: try DeviceIdentity.generate(now: now))
        )
        let trustSwitch = TrustSwitch(trust)
        let recorder = Recorder()
        let session = ControlSession(connection: server, role: role, trust: { trustSwitch.get() })
        self.client = client
        self.trust = trustSwitch
        self.handled = recorder
        self.frames = client.inbound.makeAsyncIterator()
        self.session = Task {
            await session.run { message in
                recorder.record(message)
                return await handler(message)
            }
        }
    }

    static let defaultHandler: ControlSession.Handler = { message in
        switch message {
        case .ping(let ping): [.send(.pong(ping))]
        case .pairRequest: [.send(.pairRejected(PairRejected(reason: .invalidToken)))]
        default: []
        }
    }

    // MARK: Driving the client end

    func send(_ message: ControlMessage) async throws {
        try await client.send(message)
    }

    func send(json: String) async throws {
        try await client.send(Array(json.utf8))
    }

    func sendRaw(_ bytes: [UInt8]) throws {
        try client.sendRaw(bytes)
    }

    /// The next frame's payload, or nil at the end of the stream.
    mutating func nextFrame() async throws -> [UInt8]? {
        try await frames.next().map { Array($0.readableBytesView) }
    }

    // MARK: Expectations

    /// Reads the next frame and checks it is exactly the ERROR expected, in canonical form.
    mutating func expectError(
        _ code: ErrorCode,
        inReplyTo: String?,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let frame = try #require(try await nextFrame(), "expected an ERROR frame", sourceLocation: sourceLocation)
        guard case .error(let error) = try ControlMessageCodec.decode(payload: frame) else {
            let text = String(decoding: frame, as: UTF8.self)
            Issue.record("expected ERROR, got \(text)", sourceLocation: sourceLocation)
            return
        }
        #expect(error.code == code.rawValue, sourceLocation: sourceLocation)
        #expect(error.error == code.name, sourceLocation: sourceLocation)
        #expect(error.inReplyTo == inReplyTo, sourceLocation: sourceLocation)
        #expect(!error.message.isEmpty, sourceLocation: sourceLocation)
        // The exact bytes: RFC 8785 form, keys sorted, nothing else in the object.
        let text = String(decoding: frame, as: UTF8.self)
        let prefix =
            #"{"code":\#(code.rawValue),"error":"\#(code.name)","#
            + (inReplyTo.map { #""inReplyTo":"\#($0)","# } ?? "") + #""message":""#
        #expect(text.hasPrefix(prefix), "\(text)", sourceLocation: sourceLocation)
        #expect(text.hasSuffix(#"","type":"ERROR"}"#), "\(text)", sourceLocation: sourceLocation)
        #expect(ControlMessageCodec.encode(.error(error)) == frame, sourceLocation: sourceLocation)
    }

    /// Checks that the session closed the connection with `code` after what was read so far.
    mutating func expectClosed(with code: ErrorCode, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let code = UInt64(code.rawValue)
        #expect(try await nextFrame() == nil, "no frame after the close", sourceLocation: sourceLocation)
        #expect(await client.closed() == .peerApplication(code: code, reason: ""), sourceLocation: sourceLocation)
        #expect(await session.value == .local(code: code), sourceLocation: sourceLocation)
    }

    /// Checks that the session still serves: a PING is answered with its PONG. Then ends the session.
    mutating func expectOpen(sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await send(.ping(Ping(timestamp: 4_242)))
        let frame = try #require(try await nextFrame(), "expected a PONG", sourceLocation: sourceLocation)
        let reply = try ControlMessageCodec.decode(payload: frame)
        #expect(reply == .pong(Ping(timestamp: 4_242)), sourceLocation: sourceLocation)
        await client.close(code: 0)
        #expect(await session.value == .peerApplication(code: 0, reason: ""), sourceLocation: sourceLocation)
    }
}

/// Valid messages of each kind, for sending.
enum Messages {
    static let ping = ControlMessage.ping(Ping(timestamp: 1))
    static let noiseEvent = ControlMessage.noiseEvent(
        NoiseEvent(monitorId: "m", timestamp: 1, peakLevel: 80, seq: 1, eventId: "e1")
    )
    static let pinRequired = ControlMessage.pinRequired(
        PinRequired(pairingSessionId: "s", pakeMsgA: "AAAA", expiresInSec: 60, maxAttempts: 3)
    )
    static let startStream = ControlMessage.startStreamRequest(StartStreamRequest(sessionId: "s1", mediaType: .audio))
    static let pairRequest = ControlMessage.pairRequest(
        PairRequest(
            listenerId: "4d1f0c8e-2b7a-4f51-9f0e-7b8c2d3e4f50",
            listenerName: "Kitchen",
            listenerPublicKey: "MCowBQYDK2VwAyEA",
            listenerCertFingerprint: String(repeating: "ab", count: 32),
            authTag: "dGFn"
        )
    )
    static let error = ControlMessage.error(.internalError, "monitor restarting", inReplyTo: "EVENTS_SINCE")
}
