import Foundation
import TestSupport
import Testing

/// The Node.js `ws` server the benchmark compares bemyears-server with (`Tests/Interop/bemyears/node_server.js`,
/// issue 18) speaks the same protocol: the same independent client's scenarios pass against it, so the comparison
/// is of two servers doing the same work. (Its PRESENCE is not coalesced — a plain server's behaviour — so the
/// presence scenario, whose storm checks coalescing, is not among these.)
@Suite(
    "The Node ws anchor of the benchmark speaks the protocol",
    .heavy("a node process and a Python websockets client per scenario"))
struct NodeAnchorTests {
    @Test(arguments: ["registration", "call_flow", "decline", "race", "garbage"])
    func scenario(_ name: String) async throws {
        let node = "/usr/bin/node"
        try #require(
            FileManager.default.isExecutableFile(atPath: node),
            "Node.js is not installed: apt-get install nodejs node-ws (or run `make test`, which installs them)")
        let script = InteropScript.path("node_server.js")
        let server = try BackgroundProcess(node, [script, "--host", "127.0.0.1", "--port", "0"])
        let ready = try await server.ready("node ws anchor") { $0.contains(#""event":"ready""#) }
        let port = try #require(jsonObject(ready)?["port"] as? Int)
        let run = try await InteropScript.run(
            "ws_scenarios.py", [name, "--url", "ws://127.0.0.1:\(port)/ws"], timeout: .seconds(90))
        #expect(await server.stop() != nil)
        #expect(
            run.status == 0 && run.result["ok"] as? Bool == true,
            "\(name): \(run.stdout)\n--- peer stderr ---\n\(run.stderr)\n--- node ---\n\(server.errorOutput.suffix(2000))"
        )
    }
}
