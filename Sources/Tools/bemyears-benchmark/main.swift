// BeMyEars signaling benchmark (release build; run from the repository root):
//   swift build -c release --product bemyears-server && swift build -c release --product bemyears-benchmark
//   .build/release/bemyears-benchmark [--connections 2000] [--watchers 1000] [--pairs 100] [--compare-node]
// Starts a release `bemyears-server` (in-memory store) and loads it from this process over real WebSockets
// (``measure(_:name:connections:watchers:pairs:)``: connections held, presence fan-out, call setups). With
// --compare-node it then loads, the same way and in the same run, the anchor: a plain Node.js `ws` server of the
// same protocol (Tests/Interop/bemyears/node_server.js; Debian's nodejs + node-ws), and prints both servers'
// figures and the ratios (issue 18).
// The load generator shares the 2 cores with the server, so the figures are a lower bound for a server alone.
import BenchmarkSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

func option(_ name: String, _ fallback: Int) -> Int {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: "--\(name)"), index + 1 < arguments.count else { return fallback }
    return Int(arguments[index + 1]) ?? fallback
}

/// Raises this process's open-file limit to its hard limit (each connection is a descriptor).
func raiseFileLimit() {
    var limit = rlimit()
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    limit.rlim_cur = limit.rlim_max
    setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
}

func report(_ figures: SignalingFigures) {
    say(
        String(
            format: "%@: connections held after 35 s with 15 s heartbeats: %d of %d, %.1f KiB RSS per connection, "
                + "register p50 %.1f ms / p99 %.1f ms, heartbeat ACK p99 %.1f ms, server CPU while holding %.1f %%",
            figures.name, figures.held, figures.connections, figures.residentPerConnectionKiB, figures.registerP50Ms,
            figures.registerP99Ms, figures.heartbeatAckP99Ms, figures.holdCPUPercent))
    say(
        String(
            format: "%@: presence fan-out to %d callers (40 changes): p50 %.1f ms, p99 %.1f ms; call setups: %.0f per "
                + "second, setup p99 %.1f ms", figures.name, figures.fanOutWatchers, figures.fanOutP50Ms,
            figures.fanOutP99Ms, figures.callSetupsPerSecond, figures.callSetupP99Ms))
    say(
        String(
            format:
                #"{"event":"benchmark","name":"bemyears-signaling","server":"%@","connectionsHeld":%d,"connections":%d,"memoryPerConnectionKiB":%.1f,"registerP50Ms":%.2f,"heartbeatAckP99Ms":%.2f,"holdCPUPercent":%.1f,"fanOutWatchers":%d,"fanOutP50Ms":%.2f,"fanOutP99Ms":%.2f,"callSetupsPerSecond":%.1f,"callSetupP99Ms":%.2f}"#,
            figures.name, figures.held, figures.connections, figures.residentPerConnectionKiB, figures.registerP50Ms,
            figures.heartbeatAckP99Ms, figures.holdCPUPercent, figures.fanOutWatchers, figures.fanOutP50Ms,
            figures.fanOutP99Ms, figures.callSetupsPerSecond, figures.callSetupP99Ms))
}

raiseFileLimit()
let connections = option("connections", 2_000)
let watchers = min(option("watchers", 1_000), connections)
let pairs = option("pairs", 100)
let compareNode = CommandLine.arguments.contains("--compare-node")

let ours = await benchmarkStep("starting bemyears-server") {
    try await ServerUnderTest(
        product: "bemyears-server",
        arguments: ["--host", "127.0.0.1", "--port", "0", "--json", "--max-connections-per-address", "1000000"])
}
let swiftFigures = await measure(
    ours, name: "bemyears-server", connections: connections, watchers: watchers, pairs: pairs)
ours.stop()
report(swiftFigures)

if compareNode {
    let script = FileManager.default.currentDirectoryPath + "/Tests/Interop/bemyears/node_server.js"
    guard FileManager.default.fileExists(atPath: script) else {
        failBenchmark("--compare-node needs \(script): run it from the repository root")
    }
    let anchor = await benchmarkStep("starting the Node ws anchor (apt-get install nodejs node-ws)") {
        try await ServerUnderTest(
            executable: URL(fileURLWithPath: "/usr/bin/node"),
            arguments: [script, "--host", "127.0.0.1", "--port", "0"],
            name: "node ws")
    }
    let nodeFigures = await measure(anchor, name: "node ws", connections: connections, watchers: watchers, pairs: pairs)
    anchor.stop()
    report(nodeFigures)
    func ratio(_ ours: Double, _ theirs: Double) -> String { String(format: "%.2f", ours / theirs) }
    say(
        "bemyears-server ÷ node ws (lower is better except calls/s): memory per connection "
            + "\(ratio(swiftFigures.residentPerConnectionKiB, nodeFigures.residentPerConnectionKiB)), register p50 "
            + "\(ratio(swiftFigures.registerP50Ms, nodeFigures.registerP50Ms)), CPU while holding "
            + "\(ratio(swiftFigures.holdCPUPercent, nodeFigures.holdCPUPercent)), fan-out p99 "
            + "\(ratio(swiftFigures.fanOutP99Ms, nodeFigures.fanOutP99Ms)), calls/s "
            + "\(ratio(swiftFigures.callSetupsPerSecond, nodeFigures.callSetupsPerSecond)), setup p99 "
            + "\(ratio(swiftFigures.callSetupP99Ms, nodeFigures.callSetupP99Ms))")
}
