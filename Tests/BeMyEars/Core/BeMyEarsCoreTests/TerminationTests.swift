import BeMyEarsCore
import BeMyEarsTestSupport
import CanonicalJSON
import Testing

/// Seed §7.3: every way a call ends returns the interpreter to AVAILABLE (when still connected), tells both
/// parties, and tells the caller before showing the interpreter available again.
@Suite("Call termination paths")
struct TerminationTests {
    enum Path: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case callerHangsUp, interpreterHangsUp, callerCancelsWhileRinging, webrtcFailed, ringTimeout, decline,
            noAnswerAfterAccept, noVideoWithin20Seconds, messageAfterDeadline, callerHeartbeatExpires,
            interpreterHeartbeatExpires, callerDisconnects, interpreterDisconnects, interpreterSendsGarbage

        var testDescription: String { rawValue }

        /// What the caller is told (nil: the caller is gone).
        var callerHears: CallEndReason? {
            switch self {
            case .callerHangsUp, .interpreterHangsUp, .callerCancelsWhileRinging: .hangup
            case .webrtcFailed: .webrtcFailed
            case .ringTimeout: .ringTimeout
            case .decline: .declined
            case .noAnswerAfterAccept, .noVideoWithin20Seconds, .messageAfterDeadline: .connectTimeout
            case .callerHeartbeatExpires, .callerDisconnects: nil
            case .interpreterHeartbeatExpires: .heartbeatExpired
            case .interpreterDisconnects, .interpreterSendsGarbage: .disconnected
            }
        }

        /// The reason the call ends with.
        var reason: CallEndReason {
            switch self {
            case .callerHeartbeatExpires: .heartbeatExpired
            case .callerDisconnects: .disconnected
            default: callerHears!
            }
        }

        var interpreterLeaves: Bool {
            self == .interpreterHeartbeatExpires || self == .interpreterDisconnects || self == .interpreterSendsGarbage
        }

        var callerLeaves: Bool { callerHears == nil }

        var startsConnected: Bool {
            switch self {
            case .callerCancelsWhileRinging, .ringTimeout, .decline, .noAnswerAfterAccept, .noVideoWithin20Seconds,
                .messageAfterDeadline:
                false
            default: true
            }
        }
    }

    @Test("the call ends with the right reason and the interpreter is AVAILABLE again", arguments: Path.allCases)
    func termination(path: Path) async throws {
        let harness = Harness()
        let bob = try await harness.interpreter("bob")
        let carol = try await harness.caller("carol")
        let watcher = try await harness.caller("walt")
        let callId: CallID
        if path.startsConnected {
            callId = try await harness.connectCall(bob, from: carol)
            // Fully connected: no connect deadline is left to interfere.
            await carol.send(.offer, callId: callId, payload: ["sdp": "o"])
            await bob.send(.answer, callId: callId, payload: ["sdp": "a"])
            await carol.send(.videoVisible, callId: callId, payload: ["visible": true])
            _ = try bob.received()
            _ = try carol.received()
        } else {
            callId = try await harness.ring(bob, from: carol)
        }
        _ = try watcher.received()

        switch path {
        case .callerHangsUp, .callerCancelsWhileRinging:
            await carol.send(.hangup, callId: callId)
        case .interpreterHangsUp:
            await bob.send(.hangup, callId: callId, payload: ["reason": "USER"])
        case .webrtcFailed:
            await bob.send(.hangup, callId: callId, payload: ["reason": "WEBRTC_FAILED"])
        case .ringTimeout:
            harness.clock.advance(.milliseconds(9_999))
            await harness.hub.tick()
            #expect(try carol.received().isEmpty, "not before 10 s")
            harness.clock.advance(.milliseconds(1))
            await harness.hub.tick()
        case .decline:
            await bob.send(.callDecline, callId: callId)
        case .noAnswerAfterAccept:
            harness.clock.advance(.seconds(3))
            await bob.send(.callAccept, callId: callId)
            await carol.send(.offer, callId: callId, payload: ["sdp": "o"])
            harness.clock.advance(.milliseconds(9_999))
            await harness.hub.tick()
            #expect(try carol.received().map(\.type) == [.callAccept], "not before 10 s after accept")
            harness.clock.advance(.milliseconds(1))
            await harness.hub.tick()
        case .noVideoWithin20Seconds:
            await bob.send(.callAccept, callId: callId)
            await carol.send(.offer, callId: callId, payload: ["sdp": "o"])
            await bob.send(.answer, callId: callId, payload: ["sdp": "a"])
            await bob.send(.videoVisible, callId: callId, payload: ["visible": false])
            harness.clock.advance(.seconds(15))
            for client in [bob, carol, watcher] { await client.send(.heartbeat) }
            harness.clock.advance(.milliseconds(4_999))
            await harness.hub.tick()
            #expect(try carol.received().allSatisfy { $0.type != .callEnded }, "not before 20 s after the request")
            harness.clock.advance(.milliseconds(1))
            await harness.hub.tick()
        case .messageAfterDeadline:
            // No tick fires the deadline; the late message itself finds the call overdue.
            await bob.send(.callAccept, callId: callId)
            harness.clock.advance(.seconds(10))
            await carol.send(.ice, callId: callId, payload: ["candidate": "c"])
        case .callerHeartbeatExpires, .interpreterHeartbeatExpires:
            let survivor = path == .callerHeartbeatExpires ? bob : carol
            harness.clock.advance(.seconds(15))
            await survivor.send(.heartbeat)
            await watcher.send(.heartbeat)
            harness.clock.advance(.seconds(5))
            await harness.hub.tick()
        case .callerDisconnects:
            await carol.disconnect()
        case .interpreterDisconnects:
            await bob.disconnect()
        case .interpreterSendsGarbage:
            await bob.send(text: "this is not JSON")
        }

        // The caller is told first, then shown the interpreter again.
        let callerMessages = try carol.received().filter { $0.type != .heartbeatAck && $0.type != .callAccept }
        if let heard = path.callerHears {
            let ending: Envelope =
                heard == .declined
                ? .callDecline(callId, from: Username("bob")!, to: Username("carol")!)
                : .callEnded(callId, reason: heard)
            if path.interpreterLeaves {
                #expect(callerMessages == [ending])
            } else {
                #expect(callerMessages == [ending, .presence([Username("bob")!])])
            }
        } else {
            #expect(callerMessages.isEmpty)
        }

        // The interpreter hears the ending (unless it sent the decline) and its new state.
        let interpreterMessages = try bob.received().filter { $0.type != .heartbeatAck }
        if path.interpreterLeaves {
            #expect(try await harness.interpreterState("bob") == nil)
            #expect(try watcher.received().filter { $0.type == .presence }.isEmpty, "bob was never listed again")
        } else {
            let expected: [Envelope] =
                path == .decline
                ? [.state(.available)]
                : [.callEnded(callId, reason: path.reason), .state(.available)]
            let endingMessages = interpreterMessages.filter { $0.type == .callEnded || $0 == .state(.available) }
            #expect(endingMessages == expected)
            #expect(try await harness.interpreterState("bob") == .available)
            #expect(try watcher.received().last?.presenceNames == ["bob"])
        }

        // The call is over for everybody: further messages about it are UNKNOWN_CALL.
        let record = try #require(try await harness.store.call(callId))
        #expect(record.ending?.reason == path.reason)
        #expect(harness.outbound.logs.filter { $0.event == .callEnded(path.reason) }.map(\.callId) == [callId])
        if !path.callerLeaves {
            await carol.send(.hangup, callId: callId)
            #expect(try carol.received().map(\.errorCode) == [.unknownCall])
        }
        if path.callerLeaves || path.interpreterLeaves {
            #expect(harness.outbound.closeCode(of: path.callerLeaves ? carol.id : bob.id) == Self.closeCode(path))
        }
    }

    static func closeCode(_ path: Path) -> CloseCode? {
        switch path {
        case .callerHeartbeatExpires, .interpreterHeartbeatExpires: .heartbeatExpired
        case .interpreterSendsGarbage: .protocolError
        default: nil
        }
    }

    @Test("after any ending the interpreter can be called again")
    func callableAgain() async throws {
        let harness = Harness()
        let bob = try await harness.interpreter("bob")
        let carol = try await harness.caller("carol")
        for round in 1...3 {
            let callId = try await harness.ring(bob, from: carol)
            #expect(callId == CallID(testNumber: round))
            await bob.send(.callDecline, callId: callId)
            _ = try carol.received()
        }
        #expect(try await harness.interpreterState("bob") == .available)
    }
}
