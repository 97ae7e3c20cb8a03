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

/// Raises this process's open-file limit so that `needed` descriptors fit, and returns the limit: each client
/// connection is a descriptor, and so is each of the server's, which runs as a child process and inherits the limit.
/// The machine's hard limit (20,000) is below what 20,000 connections need on both sides, so both limits go up to
/// 65,536 where that is allowed (root with CAP_SYS_RESOURCE); where it is refused, the soft limit goes up to the
/// hard one.
func raiseFileLimit(needed: Int) -> Int {
    let resource = Int32(RLIMIT_NOFILE.rawValue)
    var limit = rlimit()
    getrlimit(resource, &limit)
    let wanted = rlim_t(max(65_536, needed))
    if limit.rlim_max < wanted {
        var raised = rlimit(rlim_cur: wanted, rlim_max: wanted)
        if setrlimit(resource, &raised) == 0 {
            limit = raised
        } else {
            say(
                "could not raise the open-file limit to \(wanted) (\(String(cString: strerror(errno)))); using the hard "
                    + "limit \(limit.rlim_max)")
        }
    }
    if limit.rlim_cur < limit.rlim_max {
        limit.rlim_cur = limit.rlim_max
        setrlimit(resource, &limit)
    }
    getrlimit(resource, &limit)
    return Int(clamping: limit.rlim_cur)
}

func report(_ figures: SignalingFigures) {
    say(
        String(
            format: "%@: connections held after 35 s with 15 s heartbeats: %d of %d, %.1f KiB RSS per connection, "
                + "register p50 %.1f ms / p99 %.1f ms (one at a time: p50 %.2f ms), heartbeat ACK p99 %.1f ms, server CPU while holding %.1f %%",
            figures.name, figures.held, figures.connections, figures.residentPerConnectionKiB, figures.registerP50Ms,
            figures.registerP99Ms, figures.quietRegisterP50Ms, figures.heartbeatAckP99Ms, figures.holdCPUPercent))
    say(
        String(
            format: "%@: presence fan-out to %d callers (40 changes): p50 %.1f ms, p99 %.1f ms; call setups: %.0f per "
                + "second, setup p99 %.1f ms", figures.name, figures.fanOutWatchers, figures.fanOutP50Ms,
            figures.fanOutP99Ms, figures.callSetupsPerSecond, figures.callSetupP99Ms))
    say(
        String(
            format:
                #"{"event":"benchmark","name":"bemyears-signaling","server":"%@","connectionsHeld":%d,"connections":%d,"memoryPerConnectionKiB":%.1f,"registerP50Ms":%.2f,"quietRegisterP50Ms":%.2f,"heartbeatAckP99Ms":%.2f,"holdCPUPercent":%.1f,"fanOutWatchers":%d,"fanOutP50Ms":%.2f,"fanOutP99Ms":%.2f,"callSetupsPerSecond":%.1f,"callSetupP99Ms":%.2f}"#,
            figures.name, figures.held, figures.connections, figures.residentPerConnectionKiB, figures.registerP50Ms,
            figures.quietRegisterP50Ms, figures.heartbeatAckP99Ms, figures.holdCPUPercent, figures.fanOutWatchers,
            figures.fanOutP50Ms,
            figures.fanOutP99Ms, figures.callSetupsPerSecond, figures.callSetupP99Ms))
}

let requested = option("connections", 2_000)
let fileLimit = raiseFileLimit(needed: requested + 1_000)
// Descriptors this process needs besides the callers (and the server besides their sockets): the fan-out
// interpreter, /proc reads, pipes, event loops. Past the limit a connection (or a /proc read) fails instead.
let spareDescriptors = 100
let connections = min(requested, fileLimit - spareDescriptors)
if fileLimit < requested + 1_000 {
    say(
        "the open-file limit \(fileLimit) is below \(requested + 1_000) (connections + 1,000): "
            + (connections < requested
                ? "holding \(connections) connections instead of \(requested)" : "some descriptors may run out"))
}
let watchers = min(option("watchers", 1_000), connections)
let pairs = option("pairs", 100)
let compareNode = CommandLine.arguments.contains("--compare-node")

let ours = await benchmarkStep("starting bemyears-server") {
    try await ServerUnderTest(
        product: "bemyears-server",
        arguments: [
            "--host", "127.0.0.1", "--port", "0", "--json", "--max-connections-per-address", "1000000",
            "--rate-limit", "1000000",
        ])
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
            arguments: [script, "--host", "127.0.0.1", "--port", "0", "--rate-limit", "1000000"],
            name: "node ws")
    }
    let nodeFigures = await measure(anchor, name: "node ws", connections: connections, watchers: watchers, pairs: pairs)
    anchor.stop()
    report(nodeFigures)
    func ratio(_ ours: Double, _ theirs: Double) -> String { String(format: "%.2f", ours / theirs) }
    say(
        "bemyears-server ÷ node ws (lower is better except calls/s): memory per connection "
            + "\(ratio(swiftFigures.residentPerConnectionKiB, nodeFigures.residentPerConnectionKiB)), register p50 "
            + "\(ratio(swiftFigures.registerP50Ms, nodeFigures.registerP50Ms)) (one at a time "
            + "\(ratio(swiftFigures.quietRegisterP50Ms, nodeFigures.quietRegisterP50Ms))), CPU while holding "
            + "\(ratio(swiftFigures.holdCPUPercent, nodeFigures.holdCPUPercent)), fan-out p99 "
            + "\(ratio(swiftFigures.fanOutP99Ms, nodeFigures.fanOutP99Ms)), calls/s "
            + "\(ratio(swiftFigures.callSetupsPerSecond, nodeFigures.callSetupsPerSecond)), setup p99 "
            + "\(ratio(swiftFigures.callSetupP99Ms, nodeFigures.callSetupP99Ms))")
}
