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
}
