import Foundation
import TestSupport
import Testing

/// `bemyears-server` as an operator meets it: errors that say what to do, one warning at most for Bonjour, a
/// clean exit on SIGTERM, and a log that holds only what seed §18 allows.
@Suite("bemyears-server command line", .heavy("bemyears-server processes and Python clients"))
struct CommandLineTests {
    @Test func portInUseSaysWhatToDo() async throws {
        let first = try await ServerProcess.start()
        let second = try BackgroundProcess(
            try Subprocess.builtProduct("bemyears-server"),
            ["--host", "127.0.0.1", "--port", String(first.port), "--json", "--no-bonjour"]
        )
        let status = await second.waitForExit(timeout: .seconds(30))
        await first.stop()
        #expect(status != nil && status != 0)
        #expect(second.errorOutput.contains("already in use"), "\(second.errorOutput)")
        #expect(second.errorOutput.contains("--port"), "\(second.errorOutput)")
    }

    @Test func badStoreURLShowsTheSyntax() async throws {
        let process = try BackgroundProcess(
            try Subprocess.builtProduct("bemyears-server"),
            ["--port", "0", "--store", "mysql://user@host/db"]
        )
        let status = await process.waitForExit(timeout: .seconds(30))
        #expect(status != nil && status != 0)
        #expect(process.errorOutput.contains("memory or postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE"))
    }

    @Test func turnSecretNeedsAURL() async throws {
        let process = try BackgroundProcess(
            try Subprocess.builtProduct("bemyears-server"),
            ["--port", "0", "--turn-secret", "abc"]
        )
        let status = await process.waitForExit(timeout: .seconds(30))
        #expect(status != nil && status != 0)
        #expect(process.errorOutput.contains("--turn-url turn:HOST:PORT"))
    }

    /// With Bonjour on, the server runs whether or not an mDNS daemon is there, with one line about it.
    @Test func bonjourIsOneLineAndNeverFatal() async throws {
        let server = try await ServerProcess.start(bonjour: true)
        let deadline = ContinuousClock.now + .seconds(25)
        while !server.log.contains("event=bonjour_"), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        let lines = server.log.split(separator: "\n").filter { $0.contains("bonjour") }
        #expect(lines.count == 1, "\(server.log)")
        #expect(lines.first?.contains("_bemyears._tcp") == true)
        let run = try await InteropScript.run(
            "ws_scenarios.py", ["decline", "--url", server.webSocketURL], timeout: .seconds(60))
        #expect(run.status == 0, "\(run.stdout)")
        #expect(await server.stop() == 0)
        #expect(server.process.output.contains { $0.contains(#""event":"stopped""#) })
    }

    /// Seed §18: every line starts `YYYY-MM-DD HH:MM:SS`; call events carry the callId; no username (except an
    /// abuse report's offender), no SDP, no ICE candidate, no client text ever reaches the log.
    @Test func logHoldsOnlyAllowedFields() async throws {
        let server = try await ServerProcess.start()
        let run = try await InteropScript.run(
            "ws_scenarios.py", ["call_flow", "--url", server.webSocketURL], timeout: .seconds(60))
        #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")
        await server.stop()
        let lines = server.log.split(separator: "\n").map(String.init)
        let format = #/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} (trace|debug|info|notice|warning|error|critical) /#
        for line in lines {
            #expect(line.firstMatch(of: format) != nil, "unexpected log format: \(line)")
            for forbidden in ["v=0", "candidate", "typ host", "sdp", "mallory", "test report", "cal_", "eve_"] {
                #expect(!line.contains(forbidden), "forbidden content \(forbidden) in: \(line)")
            }
            if line.contains("ivy_") {
                #expect(line.contains("event=abuse_reported"), "a username outside an abuse report: \(line)")
            }
        }
        let callId = run.result["callId"] as? String ?? "?"
        #expect(lines.contains { $0.contains("event=call_ended reason=HANGUP callId=\(callId)") }, "\(server.log)")
        #expect(lines.contains { $0.contains("event=abuse_reported callId=\(callId)") && $0.contains("offender=ivy_") })
    }
}
