import CanonicalJSON
import CribCallProtocol
import Testing

/// The monitor's control socket as types: what `cribcall alert trigger` and `cribcall camera` send, and the
/// monitor's answers, read back exactly; anything else refused with what to send.
@Suite("MonitorControl: the control socket's requests and answers")
struct MonitorControlTests {
    @Test(
        "every request reads back from its JSON",
        arguments: [
            MonitorControlRequest.trigger(.faceCovered), .trigger(.crying), .camera(.disconnect), .camera(.reconnect),
            .status,
        ])
    func requests(request: MonitorControlRequest) throws {
        let line = request.json.canonicalString
        #expect(try MonitorControlRequest(json: try JSONParser().parse(Array(line.utf8))) == request)
    }

    @Test("a request that is not one says what to send")
    func invalidRequests() {
        let cases: [(JSONValue, String)] = [
            (["command": "reboot"], "use trigger, status or camera"),
            ([:], "use trigger, status or camera"),
            (["command": "trigger"], "kind must be one of"),
            (["command": "trigger", "kind": "asleep"], "kind must be one of"),
            (["command": "camera", "action": "unplug"], "disconnect or reconnect"),
        ]
        for (json, words) in cases {
            #expect(throws: MonitorControlRequest.Invalid.self) { try MonitorControlRequest(json: json) }
            do {
                _ = try MonitorControlRequest(json: json)
            } catch {
                #expect(error.message.contains(words), "\(json): \(error.message)")
            }
        }
    }

    @Test("every answer reads back from its JSON, as the monitor writes it")
    func answers() throws {
        let status = SafetyStatus(
            seq: 4, monitoring: .active, movement: .still, position: .onBack, faceVisible: true,
            updatedAt: 1_764_000_000)
        let answers: [MonitorControlAnswer] = [
            .done, .raised(alertId: "a-1", seq: 7, kind: .faceCovered, severity: .high), .safety(nil),
            .safety(status),
            .safety(SafetyStatus(seq: 1, monitoring: .paused, reason: "camera unplugged", updatedAt: 5)),
            .refused("monitoring is paused"),
        ]
        for answer in answers {
            let line = answer.json.canonicalString
            #expect(try MonitorControlAnswer(json: try JSONParser().parse(Array(line.utf8))) == answer, "\(line)")
        }
        #expect(MonitorControlAnswer.refused("x").json == ["ok": false, "error": "x"])
        #expect(throws: MonitorControlRequest.Invalid.self) { try MonitorControlAnswer(json: ["error": "x"]) }
    }
}
