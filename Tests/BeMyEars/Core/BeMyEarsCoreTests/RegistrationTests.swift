import BeMyEarsCore
import BeMyEarsTestSupport
import CanonicalJSON
import Testing

@Suite("Registration: REGISTER, its errors, and the registration gate")
struct RegistrationTests {
    @Test("REGISTER is answered REGISTERED with the lowercase name, role, timers and ICE servers")
    func registered() async throws {
        var configuration = SignalingConfiguration()
        configuration.iceServers = [
            ICEServer(urls: ["stun:stun.example.org:3478"]),
            ICEServer(urls: ["turn:turn.example.org:3478?transport=udp"], username: "u", credential: "secret"),
        ]
        let harness = Harness(configuration: configuration)
        let client = await harness.connect()
        await client.send(.register, payload: ["username": "Alice.Smith", "role": "caller"])
        let messages = try client.received()
        #expect(
            messages.first
                == .registered(
                    username: Username("alice.smith")!,
                    role: .caller,
                    heartbeatIntervalSeconds: 15,
                    presenceTTLSeconds: 20,
                    iceServers: configuration.iceServers
                )
        )
        #expect(
            harness.outbound.texts(to: client.id).first
                == #"{"type":"REGISTERED","payload":{"heartbeatIntervalSec":15,"iceServers":[{"urls":["#
                + #""stun:stun.example.org:3478"]},{"credential":"secret","urls":["turn:turn.example.org:3478?"#
                + #"transport=udp"],"username":"u"}],"presenceTtlSec":20,"role":"caller","username":"alice.smith"}}"#
        )
    }

    @Test(
        "anything but REGISTER first is NOT_REGISTERED, the socket stays open, and REGISTER may follow",
        arguments: [
            MessageType.heartbeat, .setState, .callRequest, .callAccept, .callDecline, .offer, .answer, .ice,
            .hangup, .videoVisible, .statsUpdate, .reportAbuse, .callEnded, .presence,
        ]
    )
    func notRegistered(type: MessageType) async throws {
        let harness = Harness()
        let client = await harness.connect()
        await client.send(type, callId: CallID(testNumber: 1), to: "bob", payload: ["state": "AVAILABLE"])
        let refusal = try #require(try client.received().first)
        #expect(refusal.errorCode == .notRegistered)
        #expect(client.closeCode == nil)
        await client.send(.register, payload: ["username": "alice", "role": "caller"])
        #expect(try client.received().first?.type == .registered)
    }

    @Test(
        "an invalid username is INVALID_USERNAME with the rule; the same socket may retry",
        arguments: ["ab", "", "josé", "\u{212A}elvin", "a b c", String(repeating: "x", count: 33)]
    )
    func invalidUsername(name: String) async throws {
        let harness = Harness()
        let client = await harness.connect()
        await client.send(.register, payload: ["username": .string(name), "role": "interpreter"])
        let refusal = try #require(try client.received().first)
        #expect(refusal.errorCode == .invalidUsername)
        #expect(refusal.payload?["message"]?.stringValue?.contains(Username.rule) == true)
        await client.send(.register, payload: ["username": "kelvin", "role": "interpreter"])
        #expect(try client.received().first?.type == .registered)
    }

    @Test("a missing or non-string username is INVALID_USERNAME; a bad role is PROTOCOL_ERROR; both stay open")
    func malformedRegister() async throws {
        let harness = Harness()
        let client = await harness.connect()
        await client.send(.register, payload: ["role": "caller"])
        await client.send(.register, payload: ["username": 12345, "role": "caller"])
        await client.send(.register, payload: ["username": "alice", "role": "admin"])
        await client.send(.register, payload: ["username": "alice"])
        #expect(
            try client.received().map(\.errorCode) == [
                .invalidUsername, .invalidUsername, .protocolError, .protocolError,
            ]
        )
        #expect(client.closeCode == nil)
    }

    @Test("usernames are unique among live sessions, case-insensitively; the name is free again after disconnect")
    func usernameTaken() async throws {
        let harness = Harness()
        let first = try await harness.caller("alice")
        let second = await harness.connect()
        await second.send(.register, payload: ["username": "ALICE", "role": "interpreter"])
        let refusal = try #require(try second.received().first)
        #expect(refusal.errorCode == .usernameTaken)
        #expect(refusal.payload?["message"]?.stringValue?.contains("alice") == true)
        await second.send(.register, payload: ["username": "alice2", "role": "caller"])
        #expect(try second.received().first?.type == .registered)

        await first.disconnect()
        let third = await harness.connect()
        await third.send(.register, payload: ["username": "Alice", "role": "caller"])
        #expect(try third.received().first?.type == .registered)
    }

    @Test("REGISTER on a registered session is BAD_STATE; the name cannot change")
    func registerTwice() async throws {
        let harness = Harness()
        let client = try await harness.caller("alice")
        await client.send(.register, payload: ["username": "bob", "role": "caller"])
        #expect(try client.received().map(\.errorCode) == [.badState])
        #expect(try await harness.store.registration(of: Username("bob")!) == nil)
        #expect(try await harness.store.registration(of: Username("alice")!)?.session == client.id)
    }

    @Test("interpreters start UNAVAILABLE")
    func interpretersStartUnavailable() async throws {
        let harness = Harness()
        _ = try await harness.interpreter("bob", online: false)
        #expect(try await harness.interpreterState("bob") == .unavailable)
        #expect(try await harness.store.availableInterpreters().isEmpty)
    }

    @Test("HEARTBEAT is answered HEARTBEAT_ACK")
    func heartbeat() async throws {
        let harness = Harness()
        let client = try await harness.interpreter("bob")
        await client.send(.heartbeat)
        #expect(try client.received() == [.heartbeatAck])
    }

    @Test("the registration log record carries sessionId and role but no username")
    func registrationLog() async throws {
        let harness = Harness()
        let client = try await harness.caller("alice")
        let record = try #require(harness.outbound.logs.first { $0.event == .registered })
        #expect(record.sessionId == client.id)
        #expect(record.role == .caller)
        #expect(!record.line.contains("alice"))
    }
}
