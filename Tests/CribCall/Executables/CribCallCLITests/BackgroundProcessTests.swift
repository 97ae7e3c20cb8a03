import Foundation
import TestSupport
import Testing

@Suite("BackgroundProcess: waiting for lines of a running program")
struct BackgroundProcessTests {
    @Test("a line printed after the wait began is found, while the program keeps running")
    func lineArrivesLater() async throws {
        let process = try BackgroundProcess("sh", ["-c", "echo first; sleep 0.5; echo '{\"x\":[1,2]}'; sleep 5"])
        let first = await process.line { $0 == "first" }
        #expect(first == "first")
        let later = await process.line(timeout: .seconds(5)) { $0.contains("\"x\"") }
        #expect(later == #"{"x":[1,2]}"#)
        await process.stop()
    }
}
