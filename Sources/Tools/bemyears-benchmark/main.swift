// BeMyEars signaling benchmark (release build; run from the repository root):
//   swift build -c release --product bemyears-server && swift build -c release --product bemyears-benchmark
//   .build/release/bemyears-benchmark [--connections 2000] [--watchers 1000] [--pairs 100]
// Starts a release `bemyears-server` (in-memory store) and loads it from this process over real WebSockets:
// 1. connections held: N callers register and heartbeat every 15 s; after 35 s (past the 20 s TTL) how many are
//    still registered and acknowledged, and the server's resident memory per connection;
// 2. presence fan-out: an interpreter toggles Go Online/Offline 40 times; latency from its SET_STATE to each of
//    `watchers` callers holding the matching PRESENCE (p50/p99);
// 3. call setups per second: `pairs` caller/interpreter pairs loop CALL_REQUEST → CALL_ACCEPT → HANGUP →
//    CALL_ENDED for 10 s (counted at CALL_ACCEPT reaching the caller).
// The load generator shares the 2 cores with the server, so the figures are a lower bound for the server alone.
import BenchmarkSupport
import Foundation
import Synchronization

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

raiseFileLimit()
let connections = option("connections", 2_000)
let watcherCount = min(option("watchers", 1_000), connections)
let pairCount = option("pairs", 100)
let run = String(UInt32.random(in: 0...UInt32.max), radix: 36)

let server = await benchmarkStep("starting bemyears-server") {
    try await ServerUnderTest(
        product: "bemyears-server",
        arguments: ["--host", "127.0.0.1", "--port", "0", "--json", "--max-connections-per-address", "1000000"])
}
let serverURL = "ws://127.0.0.1:\(server.port)/ws"
let baseline = residentBytes(of: server.process.processIdentifier)

// 1. Connections held, with heartbeats, past the presence TTL.
let fanOut = FanOutRecorder()
var callers: [LoadClient] = []
for index in 0..<connections {
    let watching = index < watcherCount
    callers.append(
        LoadClient(url: serverURL, username: "c\(run)\(index)", role: "caller") { client, message in
            if watching, message.type == "PRESENCE" { fanOut.record(message, watcher: client.username) }
        })
    if index % 200 == 199 { try? await Task.sleep(for: .milliseconds(50)) }  // a ramp, not a SYN flood
}
var registered = 0
for caller in callers where await caller.waitRegistered() { registered += 1 }
say("registered \(registered) of \(connections) callers")
try? await Task.sleep(for: .seconds(35))
let now = monotonicNanoseconds()
let held = callers.filter { !$0.isClosed && $0.isRegistered && now - $0.lastHeartbeatAck < 20_000_000_000 }.count
let loaded = residentBytes(of: server.process.processIdentifier)
let perConnection = Double(loaded - baseline) / Double(max(1, held))
say(
    String(
        format: "Connections held after 35 s with 15 s heartbeats: %d of %d; server RSS %.1f MiB → %.1f MiB, "
            + "%.1f KiB per connection", held, connections, Double(baseline) / 1_048_576, Double(loaded) / 1_048_576,
        perConnection / 1024))

// 2. Presence fan-out to the watchers.
let interpreter = LoadClient(url: serverURL, username: "i\(run)fan", role: "interpreter")
guard await interpreter.waitRegistered() else { failBenchmark("the fan-out interpreter did not register") }
var latencies: [Double] = []
for toggle in 0..<40 {
    let online = toggle % 2 == 0
    fanOut.expect(interpreter: interpreter.username, present: online, watchers: watcherCount)
    let sent = monotonicNanoseconds()
    interpreter.send(#"{"type":"SET_STATE","payload":{"state":"\#(online ? "AVAILABLE" : "UNAVAILABLE")"}}"#)
    let arrivals = await fanOut.wait(timeout: .seconds(10))
    latencies += arrivals.map { Double($0 - sent) / 1e6 }
    if arrivals.count < watcherCount {
        say("toggle \(toggle): only \(arrivals.count) of \(watcherCount) watchers updated")
    }
    try? await Task.sleep(for: .milliseconds(250))
}
say(
    String(
        format: "Presence fan-out to %d callers (40 changes): p50 %.1f ms, p99 %.1f ms, max %.1f ms",
        watcherCount, percentile(latencies, 0.5), percentile(latencies, 0.99), latencies.max() ?? .nan))
await interpreter.close()
for caller in callers { await caller.close() }
callers = []

// 3. Call setups per second.
let setups = Atomic<Int>(0)
let running = Atomic<Bool>(true)
var pairs: [(LoadClient, LoadClient)] = []
for index in 0..<pairCount {
    let interpreterName = "i\(run)p\(index)"
    let interpreter = LoadClient(url: serverURL, username: interpreterName, role: "interpreter") { client, message in
        switch message.type {
        case "REGISTERED": client.send(#"{"type":"SET_STATE","payload":{"state":"AVAILABLE"}}"#)
        case "CALL_REQUEST":
            if let callId = message.object["callId"] as? String {
                client.send(#"{"type":"CALL_ACCEPT","callId":"\#(callId)"}"#)
            }
        default: break
        }
    }
    let caller = LoadClient(url: serverURL, username: "c\(run)p\(index)", role: "caller") { client, message in
        guard running.load(ordering: .acquiring) else { return }
        switch message.type {
        case "CALL_ACCEPT":
            setups.add(1, ordering: .relaxed)
            if let callId = message.object["callId"] as? String {
                client.send(#"{"type":"HANGUP","callId":"\#(callId)"}"#)
            }
        case "CALL_ENDED", "BUSY", "CALL_DECLINE":
            client.send(#"{"type":"CALL_REQUEST","to":"\#(interpreterName)"}"#)
        default: break
        }
    }
    pairs.append((caller, interpreter))
}
for (caller, interpreter) in pairs {
    guard await caller.waitRegistered(), await interpreter.waitRegistered() else {
        failBenchmark("a caller/interpreter pair did not register")
    }
}
try? await Task.sleep(for: .milliseconds(500))  // interpreters online
let start = ContinuousClock.now
for (caller, interpreter) in pairs {
    caller.send(#"{"type":"CALL_REQUEST","to":"\#(interpreter.username)"}"#)
}
try? await Task.sleep(for: .seconds(10))
running.store(false, ordering: .releasing)
let elapsed = milliseconds(ContinuousClock.now - start) / 1000
let rate = Double(setups.load(ordering: .relaxed)) / elapsed
say(
    String(
        format:
            "Call setups (CALL_REQUEST → CALL_ACCEPT at the caller → HANGUP → CALL_ENDED), %d pairs: %.0f per second",
        pairCount, rate))
say(
    String(
        format:
            #"{"event":"benchmark","name":"bemyears-signaling","connectionsHeld":%d,"connections":%d,"memoryPerConnectionKiB":%.1f,"fanOutWatchers":%d,"fanOutP50Ms":%.2f,"fanOutP99Ms":%.2f,"callSetupsPerSecond":%.1f}"#,
        held, connections, perConnection / 1024, watcherCount, percentile(latencies, 0.5), percentile(latencies, 0.99),
        rate))
for (caller, interpreter) in pairs {
    await caller.close()
    await interpreter.close()
}
server.stop()
