import CanonicalJSON
import Testing
import ToukanCore

/// The recorder daemon's control socket as a type: every request the commands send reads back exactly; anything
/// else is refused with the commands there are.
@Suite("DaemonRequest: the daemon's control socket requests")
struct DaemonRequestTests {
    @Test(
        "every request reads back from its JSON",
        arguments: [
            DaemonRequest.start(source: "auto", server: nil), .start(source: "file:/tmp/a.wav", server: "http://h:1"),
            .stop, .status, .watch, .wake, .quit,
        ])
    func roundTrip(request: DaemonRequest) throws {
        let line = request.json.canonicalString
        #expect(try DaemonRequest(json: try JSONParser().parse(Array(line.utf8))) == request)
    }

    @Test("start without a source records from the default input; anything else says what there is")
    func reading() throws {
        #expect(try DaemonRequest(json: ["command": "start"]) == .start(source: "auto", server: nil))
        for json: JSONValue in [["command": "format"], [:], ["command": 3], ["command": "start", "server": 8080]] {
            #expect(throws: DaemonRequest.Invalid.self, "\(json)") { try DaemonRequest(json: json) }
        }
        do {
            _ = try DaemonRequest(json: ["command": "format"])
        } catch {
            #expect(error.message.contains("start, stop, status, watch, wake or quit"))
        }
    }

    @Test(
        "every answer reads back from its JSON",
        arguments: [
            DaemonReply.done(.recordingStarted, file: "/d/toukan_2026-11-29T10-00-00Z.m4a"),
            .done(.recordingSaved, file: "/d/a.m4a", durationSeconds: 12.3), .done(.notRecording), .done(),
            .refused("Not enough free space to record: 42 MB left; free at least 100 MB"),
        ])
    func replies(reply: DaemonReply) throws {
        let line = reply.json.canonicalString
        #expect(try DaemonReply(json: try JSONParser().parse(Array(line.utf8))) == reply)
    }

    @Test(
        "every status reads back from its JSON; no daemon is idle with no pid",
        arguments: [
            DaemonStatus.noDaemon, DaemonStatus(pid: 42, state: .idle),
            DaemonStatus(
                pid: 42, state: .paused, elapsedSeconds: 61.5, file: "/d/a.m4a",
                level: .init(peakDb: -23, rmsDb: -31), gaps: ["gap 00:12–00:15"],
                recoveredAtStart: [.init(file: "b.m4a", durationSeconds: 4.2)]),
        ])
    func statuses(status: DaemonStatus) throws {
        let line = status.json.canonicalString
        #expect(try DaemonStatus(json: try JSONParser().parse(Array(line.utf8))) == status)
        #expect(status.json["event"] == "status")
    }

    @Test("what is not an answer or a status says so, instead of reading as one")
    func notAnswers() {
        for json: JSONValue in [[:], ["ok": "yes"], ["ok": true, "reply": "Recording maybe"]] {
            #expect(throws: DaemonRequest.Invalid.self, "\(json)") { try DaemonReply(json: json) }
        }
        for json: JSONValue in [["ok": true], ["event": "status"], ["event": "status", "state": "asleep"]] {
            #expect(throws: DaemonRequest.Invalid.self, "\(json)") { try DaemonStatus(json: json) }
        }
    }
}
