import Foundation
import TestSupport
import Testing

/// Two `bemyears-server` processes sharing one PostgreSQL (`--store postgres://…`): a call between a caller on
/// one node and an interpreter on the other (a 60 KB OFFER through the bus), USERNAME_TAKEN across nodes, a
/// 20-caller race split over both nodes, presence following a disconnect. Needs Debian's postgresql package.
@Suite("Two bemyears-server processes over PostgreSQL", .heavy(cores: 0.75, "two servers and PostgreSQL"))
struct PostgresClusterTests {
    @Test func callAcrossNodes() async throws {
        let postgres = try await LocalPostgres.shared()
        let database = try await postgres.createDatabase("bemyears_server")
        let nodeA = try await ServerProcess.start(["--store", database.tcpURL, "--node-id", "node-a"])
        let nodeB = try await ServerProcess.start(["--store", database.tcpURL, "--node-id", "node-b"])
        let run = try await InteropScript.run(
            "ws_scenarios.py",
            ["cross_node", "--url", nodeA.webSocketURL, "--url2", nodeB.webSocketURL],
            timeout: .seconds(90)
        )
        let exitA = await nodeA.stop()
        let exitB = await nodeB.stop()
        let details =
            "\(run.stdout)\n\(run.stderr)\n--- node A ---\n\(nodeA.log.suffix(3000))\n--- node B ---\n"
            + "\(nodeB.log.suffix(3000))"
        #expect(run.status == 0 && run.result["ok"] as? Bool == true, Comment(rawValue: details))
        #expect(
            exitA == 0 && exitB == 0,
            "the nodes did not shut down cleanly: \(String(describing: exitA)), \(String(describing: exitB))")
        #expect(!nodeA.log.contains(database.tcpURL), "the database URL was logged")
    }

    /// `--store-password-file`: the password stays out of the process list; a file others may read is refused with
    /// the fix. (The test cluster trusts local connections, so this checks the plumbing, not PostgreSQL's check.)
    @Test func storePasswordFromFile() async throws {
        let postgres = try await LocalPostgres.shared()
        let database = try await postgres.createDatabase("bemyears_password")
        let password = "pw-\(UUID().uuidString.prefix(8))"
        let directory = try Subprocess.temporaryDirectory("bemyears-store-password")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("store-password")
        try Data((password + "\n").utf8).write(to: file)
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: file.path)
        let arguments = ["--store", database.tcpURL, "--store-password-file", file.path]
        let refused = try await Subprocess.run(
            try Subprocess.builtProduct("bemyears-server"), ["--port", "0", "--no-bonjour"] + arguments)
        #expect(refused.status != 0 && refused.stderrText.contains("chmod 600"), "\(refused.stderrText)")

        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        let server = try await ServerProcess.start(arguments)
        let commandLine = try Data(
            contentsOf: URL(fileURLWithPath: "/proc/\(server.process.processIdentifier)/cmdline"))
        #expect(!String(decoding: commandLine, as: UTF8.self).contains(password))
        let run = try await InteropScript.run(
            "ws_scenarios.py", ["registration", "--url", server.webSocketURL], timeout: .seconds(60))
        await server.stop()
        #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")
        #expect(!server.log.contains(password), "the password was logged")
    }

    /// Issue 17 item 13: PostgreSQL restarts under a node with calls in progress (its own server: the shared one
    /// serves other tests). A hang-up and a disconnect during the outage, a call ringing through it: within 20 s of
    /// PostgreSQL's return every call has ended with its reason, names and presence are right, calls work.
    @Test func postgresRestartsUnderCalls() async throws {
        let postgres = try await LocalPostgres.startPrivate()
        let database = try await postgres.createDatabase("bemyears_restart")
        let node = try await ServerProcess.start(["--store", database.tcpURL, "--node-id", "node-a"])
        let outage = try Subprocess.temporaryDirectory("bemyears-outage")
        let script = try BackgroundProcess(
            try InteropScript.python(),
            [
                InteropScript.path("ws_scenarios.py"), "pg_restart", "--url", node.webSocketURL, "--outage-dir",
                outage.path,
            ])
        var details: String {
            "\(script.output.joined(separator: "\n"))\n\(script.errorOutput)\n--- node ---\n\(node.log.suffix(4000))"
        }
        let callsUp = await script.line(timeout: .seconds(60)) { $0.contains(#""event": "calls_up""#) }
        try #require(callsUp != nil, Comment(rawValue: details))
        // Down for 3 s: the hang-up and the disconnect happen meanwhile.
        let restarting = Task { try await postgres.restart(down: .seconds(3)) }
        try await Task.sleep(for: .milliseconds(500))
        FileManager.default.createFile(atPath: outage.appendingPathComponent("down").path, contents: nil)
        let acted = await script.line(timeout: .seconds(30)) { $0.contains(#""event": "acted""#) }
        try await restarting.value
        FileManager.default.createFile(atPath: outage.appendingPathComponent("up").path, contents: nil)
        let status = await script.waitForExit(timeout: .seconds(90))
        let result = script.output.last { $0.hasPrefix("{") }.flatMap(jsonObject) ?? [:]
        await node.stop()
        await postgres.shutdown()
        try? FileManager.default.removeItem(at: outage)
        #expect(acted != nil && status == 0 && result["ok"] as? Bool == true, Comment(rawValue: details))
        print("postgres restart under calls: \(result)")
    }
}
