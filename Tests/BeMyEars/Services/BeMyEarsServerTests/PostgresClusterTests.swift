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
}
