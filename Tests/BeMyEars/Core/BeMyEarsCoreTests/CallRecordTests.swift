import BeMyEarsCore
import BeMyEarsTestSupport
import Foundation
import Testing

@Suite("Call state machine: authorization, transitions and deadlines as pure functions")
struct CallRecordTests {
    let start = ManualClock.start
    let caller = CallParty(username: Username("alice")!, session: .random(), node: .local)
    let interpreter = CallParty(username: Username("bob.signs")!, session: .random(), node: .local)
    let stranger = SessionID.random()

    func ringing() -> CallRecord {
        CallRecord(
            CallRequest(
                id: CallID(testNumber: 1),
                caller: caller,
                interpreter: interpreter.username,
                requestedAt: start,
                timeouts: CallTimeouts()
            ),
            interpreter: interpreter
        )
    }

    func at(_ seconds: Double) -> Date { start.addingTimeInterval(seconds) }

    /// Applies `event` at `seconds` after the request.
    func step(_ call: inout CallRecord, _ event: CallEvent, at seconds: Double) -> CallTransition {
        call.apply(event, at: at(seconds))
    }

    @Test("a new call rings with a 10 s deadline for RING_TIMEOUT")
    func ringDeadline() {
        let call = ringing()
        #expect(call.state == .ringing)
        #expect(call.nextDeadline == CallRecord.Deadline(date: at(10), reason: .ringTimeout))
        #expect(call.dueReason(at: at(9.999)) == nil)
        #expect(call.dueReason(at: at(10)) == .ringTimeout)
    }

    @Test("the interpreter accepts; the answer (10 s after accept) and video (20 s after request) deadlines follow")
    func acceptDeadlines() {
        var call = ringing()
        #expect(step(&call, .accept(by: interpreter.session), at: 4) == .accepted)
        #expect(call.nextDeadline == CallRecord.Deadline(date: at(14), reason: .connectTimeout))
        #expect(step(&call, .relay(.answer, by: caller.session), at: 5) == .relay(to: interpreter))
        #expect(call.nextDeadline == CallRecord.Deadline(date: at(20), reason: .connectTimeout))
        #expect(
            step(&call, .relay(.videoVisible, by: interpreter.session, videoVisible: false), at: 6)
                == .relay(to: caller)
        )
        #expect(call.nextDeadline?.date == at(20), "visible:false does not meet the deadline")
        #expect(
            step(&call, .relay(.videoVisible, by: interpreter.session, videoVisible: true), at: 7)
                == .relay(to: caller)
        )
        #expect(call.nextDeadline == nil)
        #expect(step(&call, .expire, at: 3600) == .notDue)
    }

    @Test("video visible before the answer still leaves the answer deadline")
    func videoBeforeAnswer() {
        var call = ringing()
        _ = call.apply(.accept(by: interpreter.session), at: at(1))
        _ = call.apply(.relay(.videoVisible, by: caller.session, videoVisible: true), at: at(2))
        #expect(call.nextDeadline == CallRecord.Deadline(date: at(11), reason: .connectTimeout))
    }

    @Test("an accept at 9 s leaves the 20 s video deadline as the later one")
    func lateAccept() {
        var call = ringing()
        _ = call.apply(.accept(by: interpreter.session), at: at(9))
        _ = call.apply(.relay(.answer, by: interpreter.session), at: at(10))
        #expect(call.nextDeadline == CallRecord.Deadline(date: at(20), reason: .connectTimeout))
        #expect(step(&call, .expire, at: 19) == .notDue)
        #expect(step(&call, .expire, at: 20) == .ended(.connectTimeout))
    }

    @Test("authorization: only the call's sessions, each on its side")
    func authorization() {
        var call = ringing()
        #expect(step(&call, .accept(by: caller.session), at: 1) == .rejected(.roleForbidden))
        #expect(step(&call, .decline(by: caller.session), at: 1) == .rejected(.roleForbidden))
        #expect(step(&call, .accept(by: stranger), at: 1) == .rejected(.notAParty))
        #expect(step(&call, .hangUp(by: stranger, reason: .hangup), at: 1) == .rejected(.notAParty))
        #expect(step(&call, .relay(.offer, by: stranger), at: 1) == .rejected(.notAParty))
        #expect(step(&call, .leave(stranger, reason: .disconnected), at: 1) == .rejected(.notAParty))
        #expect(step(&call, .relay(.offer, by: caller.session), at: 1) == .rejected(.notAccepted))
        #expect(call.state == .ringing, "refusals change nothing")
        #expect(step(&call, .accept(by: interpreter.session), at: 2) == .accepted)
        #expect(step(&call, .accept(by: interpreter.session), at: 3) == .rejected(.notRinging))
        #expect(step(&call, .decline(by: interpreter.session), at: 3) == .rejected(.notRinging))
    }

    enum Ending: String, CaseIterable, Sendable {
        case decline, callerHangsUp, webrtcFailed, callerDisconnects, interpreterExpires

        func event(caller: CallParty, interpreter: CallParty) -> (CallEvent, CallEndReason) {
            switch self {
            case .decline: (.decline(by: interpreter.session), .declined)
            case .callerHangsUp: (.hangUp(by: caller.session, reason: .hangup), .hangup)
            case .webrtcFailed: (.hangUp(by: interpreter.session, reason: .webrtcFailed), .webrtcFailed)
            case .callerDisconnects: (.leave(caller.session, reason: .disconnected), .disconnected)
            case .interpreterExpires: (.leave(interpreter.session, reason: .heartbeatExpired), .heartbeatExpired)
            }
        }
    }

    @Test("every ending ends the call once; later events see an unknown call", arguments: Ending.allCases)
    func endingsOnce(ending: Ending) {
        let (event, reason) = ending.event(caller: caller, interpreter: interpreter)
        var call = ringing()
        #expect(step(&call, event, at: 1) == .ended(reason))
        #expect(call.ending?.reason == reason)
        #expect(call.ending?.date == at(1))
        #expect(!call.isLive)
        #expect(step(&call, event, at: 1) == .rejected(.unknownCall))
        #expect(step(&call, .hangUp(by: caller.session, reason: .hangup), at: 2) == .rejected(.unknownCall))
        #expect(step(&call, .expire, at: 100) == .rejected(.unknownCall))
        #expect(call.ending?.reason == reason, "the first ending stays")
    }

    @Test("an event after a passed deadline ends the call with the deadline's reason")
    func lateEvents() {
        var call = ringing()
        #expect(step(&call, .accept(by: interpreter.session), at: 10) == .ended(.ringTimeout))
        var accepted = ringing()
        _ = accepted.apply(.accept(by: interpreter.session), at: at(1))
        #expect(step(&accepted, .relay(.answer, by: caller.session), at: 11) == .ended(.connectTimeout))
        var hungUp = ringing()
        #expect(step(&hungUp, .hangUp(by: caller.session, reason: .hangup), at: 12) == .ended(.ringTimeout))
    }

    @Test("REPORT_ABUSE: parties by username, during the call and up to 5 minutes after it ended")
    func abuseWindow() {
        var call = ringing()
        let window = Duration.seconds(300)
        #expect(call.abuseReport(from: caller.username, at: at(1), window: window) == .accepted(offender: interpreter))
        #expect(call.abuseReport(from: Username("mallory")!, at: at(1), window: window) == .rejected(.notAParty))
        _ = call.apply(.hangUp(by: caller.session, reason: .hangup), at: at(5))
        #expect(
            call.abuseReport(from: interpreter.username, at: at(305), window: window) == .accepted(offender: caller)
        )
        #expect(call.abuseReport(from: interpreter.username, at: at(305.5), window: window) == .rejected(.unknownCall))
        #expect(call.abuseReport(from: Username("mallory")!, at: at(306), window: window) == .rejected(.unknownCall))
    }

    @Test("a record survives a Codable round trip (how a database store may keep it)")
    func codable() throws {
        var call = ringing()
        _ = call.apply(.accept(by: interpreter.session), at: at(2))
        _ = call.apply(.relay(.answer, by: caller.session), at: at(3))
        let data = try JSONEncoder().encode(call)
        let decoded = try JSONDecoder().decode(CallRecord.self, from: data)
        #expect(decoded == call)
        #expect(decoded.nextDeadline == call.nextDeadline)
    }
}
