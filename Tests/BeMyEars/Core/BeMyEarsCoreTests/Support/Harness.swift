import BeMyEarsCore
import BeMyEarsTestSupport
import CanonicalJSON
import Foundation
import Testing

/// One hub on a manual clock with a recording outbound: a server without sockets.
struct Harness {
    let clock: ManualClock
    let store: any SignalingStore
    let outbound = RecordingOutbound()
    let hub: SignalingHub

    init(
        node: NodeID = .local,
        store: any SignalingStore = InMemorySignalingStore(),
        clock: ManualClock = ManualClock(),
        callIDs: CallIDGenerator = .sequential(),
        configuration: SignalingConfiguration = .immediatePresence,
        iceServers: ICEServerProvider? = nil
    ) {
        self.clock = clock
        self.store = store
        self.hub = SignalingHub(
            node: node,
            store: store,
            outbound: outbound,
            clock: clock,
            callIDs: callIDs,
            configuration: configuration,
            iceServers: iceServers
        )
    }

    /// A connected, unregistered client.
    func connect() async -> TestClient {
        let client = TestClient(id: .random(), hub: hub, outbound: outbound)
        await hub.connect(client.id)
        return client
    }

    /// A registered caller whose REGISTERED and first PRESENCE have been consumed.
    func caller(_ name: String) async throws -> TestClient {
        let client = await connect()
        await client.send(.register, payload: ["username": .string(name), "role": "caller"])
        let messages = try client.received()
        try #require(messages.first?.type == .registered, "\(name) did not register: \(messages)")
        return client
    }

    /// A registered interpreter, online (AVAILABLE) unless told otherwise, its messages consumed.
    func interpreter(_ name: String, online: Bool = true) async throws -> TestClient {
        let client = await connect()
        await client.send(.register, payload: ["username": .string(name), "role": "interpreter"])
        try #require(try client.received().first?.type == .registered, "\(name) did not register")
        if online {
            await client.send(.setState, payload: ["state": "AVAILABLE"])
            try #require(try client.received() == [.state(.available)])
        }
        return client
    }

    func interpreterState(_ name: String) async throws -> InterpreterState? {
        try await store.registration(of: Username(validating: name))?.interpreterState
    }

    /// A caller rings an interpreter; returns the callId. Both sides' messages are consumed.
    func ring(_ interpreter: TestClient, from caller: TestClient) async throws -> CallID {
        let name = try #require(try interpreter.registeredName())
        await caller.send(.callRequest, to: name)
        let ringing = try #require(try caller.received().first { $0.type == .callRinging })
        _ = try interpreter.received()
        return try #require(ringing.callId.flatMap(CallID.init))
    }

    /// A caller rings and the interpreter accepts; returns the callId. Messages consumed.
    func connectCall(_ interpreter: TestClient, from caller: TestClient) async throws -> CallID {
        let callId = try await ring(interpreter, from: caller)
        await interpreter.send(.callAccept, callId: callId)
        try #require(try caller.received().map(\.type) == [.callAccept])
        try #require(try interpreter.received() == [.state(.inCall)])
        return callId
    }
}

/// One WebSocket session, seen from the client side.
struct TestClient: Sendable {
    let id: SessionID
    let hub: SignalingHub
    let outbound: RecordingOutbound

    func send(text: String) async {
        await hub.receive(text, from: id)
    }

    func send(
        _ type: MessageType,
        callId: CallID? = nil,
        to: String? = nil,
        payload: JSONValue? = nil
    ) async {
        await send(text: EnvelopeCodec.encode(Envelope(type: type, callId: callId?.rawValue, to: to, payload: payload)))
    }

    func disconnect() async {
        await hub.disconnect(id)
    }

    /// Messages received since the last call.
    func received() throws -> [Envelope] {
        try outbound.newMessages(to: id)
    }

    /// Every message received so far.
    func allReceived() throws -> [Envelope] {
        try outbound.allMessages(to: id)
    }

    var closeCode: CloseCode? { outbound.closeCode(of: id) }

    /// The username from this client's REGISTERED.
    func registeredName() throws -> String? {
        try allReceived().first { $0.type == .registered }?.payload?["username"]?.stringValue
    }
}

extension Envelope {
    /// The `code` of an ERROR.
    var errorCode: ErrorCode? {
        guard type == .error, let code = payload?["code"]?.stringValue else { return nil }
        return ErrorCode(rawValue: code)
    }

    /// The usernames listed by a PRESENCE.
    var presenceNames: [String]? {
        guard type == .presence else { return nil }
        return payload?["interpreters"]?.arrayValue?.compactMap { $0["username"]?.stringValue }
    }

    /// The `reason` of a CALL_ENDED.
    var endReason: String? {
        guard type == .callEnded else { return nil }
        return payload?["reason"]?.stringValue
    }
}
