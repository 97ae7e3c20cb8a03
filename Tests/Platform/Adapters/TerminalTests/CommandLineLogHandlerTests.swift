import Logging
import Testing

@testable import Terminal

@Suite("Command-line diagnostics")
struct CommandLineLogHandlerTests {
    @Test("a record reads as the command's own line: label, message, then sorted metadata")
    func line() {
        #expect(
            CommandLineLogHandler.line(label: "cribcall monitor", message: "live streaming is off: no webrtcbin")
                == "cribcall monitor: live streaming is off: no webrtcbin\n")
        #expect(
            CommandLineLogHandler.line(label: "x", message: "m", metadata: ["b": "2", "a": "1"]) == "x: m a=1 b=2\n")
    }

    @Test("the handler keeps its level and metadata like any swift-log handler")
    func handler() {
        var handler = CommandLineLogHandler(label: "cribcall listen")
        #expect(handler.logLevel == .info)
        handler[metadataKey: "monitor"] = "Nursery"
        #expect(handler[metadataKey: "monitor"] == "Nursery")
        handler.logLevel = .error
        #expect(handler.logLevel == .error)
    }
}
